import { randomUUID } from "node:crypto";
import type { EmuRequest, EmuResponse } from "../types.js";
import { checkOwner, keyScope, ownerOf, recordPoll } from "./access.js";
import { canonical, jsonBody } from "./body.js";
import { fail } from "./errors.js";
import type { Caller } from "./headers.js";
import { idempotencyKey } from "./headers.js";
import type { V10Deps } from "./machine.js";
import { activePayment, currentCheckin, finish } from "./machine.js";
import type { BeaconType, Pos } from "./model.js";
import { BEACON_TYPES } from "./model.js";
import { BEACON_ID, isValidText, str, text } from "./validate.js";
import { posView, userData } from "./views.js";

const CREATE_FIELDS = [
  "merchantPosId",
  "storeId",
  "name",
  "supportedBeaconTypes",
  "beaconId",
  "callbackAlias",
  "requirePaymentBeforeCheckin",
  "calibrationType",
];

function beaconTypes(value: unknown): BeaconType[] {
  const ok =
    Array.isArray(value) &&
    value.every((t) => (BEACON_TYPES as readonly unknown[]).includes(t)) &&
    new Set(value).size === value.length;
  if (!ok)
    fail(400, "1099", `supportedBeaconTypes must be a list of unique values of ${BEACON_TYPES.join(", ")}`);
  return value as BeaconType[];
}

/**
 * `POST /v10/pointofsales` (pos-v10 §4, §5, §9, §19): 1111 merchantPosId, 1112 name, 1100 beaconId, 1116
 * callbackAlias (invalid or not registered), 1118 calibrationType (legacy field, integer 0-65535), then the
 * idempotency key, then 1002 unknown store, 1403 another merchant's store, 1200 merchantPosId in use, 1202
 * beaconId in use by an active PoS. Without a beaconId the service generates a GUID.
 */
export async function createPos(d: V10Deps, req: EmuRequest, caller: Caller): Promise<EmuResponse> {
  const key = idempotencyKey(req);
  const body = jsonBody(req, CREATE_FIELDS);
  const merchantPosId = text(body, "merchantPosId", "1111");
  const storeId = str(body, "storeId");
  const name = text(body, "name", "1112");
  const types = beaconTypes(body.supportedBeaconTypes);
  const beacon = body.beaconId;
  if (beacon !== undefined && beacon !== null && (typeof beacon !== "string" || !BEACON_ID.test(beacon))) {
    fail(400, "1100", "beaconId must be a GUID or 15 digits");
  }
  const alias = body.callbackAlias;
  if (alias !== undefined && alias !== null && (!isValidText(alias) || !d.hasCallbackAlias(alias))) {
    fail(400, "1116", "callbackAlias is invalid or not issued for the notification service");
  }
  const rpc = body.requirePaymentBeforeCheckin;
  if (rpc !== undefined && typeof rpc !== "boolean")
    fail(400, "1099", "requirePaymentBeforeCheckin must be a boolean");
  const cal = body.calibrationType;
  if (
    cal !== undefined &&
    cal !== null &&
    (!Number.isInteger(cal) || (cal as number) < 0 || (cal as number) > 65535)
  ) {
    fail(400, "1118", "calibrationType must be an integer 0-65535");
  }
  return d.idempotency.run(keyScope(caller, req.method, req.path), key, canonical(body), req.hold, () => {
    const store = d.world.stores.get(storeId);
    if (store === undefined) fail(409, "1002", "store not found");
    if (store.vat !== caller.vat) fail(403, "1403", "the store belongs to another merchant");
    if (d.world.posByMerchantPosId(caller, merchantPosId))
      fail(409, "1200", "a point of sale with this merchantPosId exists");
    const beaconId = typeof beacon === "string" ? beacon : randomUUID();
    if (d.world.posByBeacon(beaconId)) fail(409, "1202", "a point of sale with this beaconId exists");
    const pos: Pos = {
      posId: randomUUID(),
      owner: ownerOf(caller),
      merchantPosId,
      storeId,
      name,
      beaconId,
      supportedBeaconTypes: types,
      requirePaymentBeforeCheckin: rpc === true,
      callbackAlias: typeof alias === "string" ? alias : null,
      deleted: false,
      active: null,
      checkin: null,
      payments: new Set(),
      polledBy: null,
      polledAt: 0,
    };
    d.world.addPos(pos);
    return { status: 200, body: { posId: pos.posId } };
  });
}

/** `GET /v10/pointofsales/{id}`: 1400 other integrator, 1410 other merchant. */
export function getPos(caller: Caller, pos: Pos): EmuResponse {
  checkOwner(pos.owner, caller, "1400", "1410");
  return { status: 200, body: posView(pos) };
}

/**
 * `DELETE /v10/pointofsales/{id}` (seed rule 3): 1400/1409 ownership. Its Reserved payments stay capturable;
 * an active (unreserved) payment is cancelled by the service, since no payment can be issued any more.
 */
export function deletePos(d: V10Deps, caller: Caller, pos: Pos): EmuResponse {
  checkOwner(pos.owner, caller, "1400", "1409");
  const now = d.clock.now();
  const active = activePayment(d, pos, now);
  if (active !== null) finish(d, active, "CancelledByService", now);
  d.world.deletePos(pos);
  return { status: 200 };
}

/**
 * `GET /v10/pointofsales/{id}/checkin` (pos-v10 §10): always 200 for an accessible PoS, with
 * `isUserCheckedIn` and the user's data while an unpaired check-in lasts; 1400 for any other owner.
 */
export function getCheckin(d: V10Deps, caller: Caller, pos: Pos): EmuResponse {
  checkOwner(pos.owner, caller, "1400", "1400");
  const now = d.clock.now();
  const delay = d.config.pollDelayMs;
  if (recordPoll(pos, caller.clientId, now, delay)) d.stats.earlyPoll(caller.clientId);
  const checkin = currentCheckin(d, pos, now);
  const body: Record<string, unknown> = { isUserCheckedIn: checkin !== null, pollDelayInMs: delay };
  if (checkin !== null) Object.assign(body, userData(checkin.user));
  return { status: 200, body };
}

/**
 * `GET /v10/pointofsales?storeId=&beaconId=&merchantPosId=` (pos-v10 §13): ANDed filters, none → 1121; only
 * the caller's active PoSes.
 */
export function listPos(d: V10Deps, req: EmuRequest, caller: Caller): EmuResponse {
  const storeId = req.query.get("storeId");
  const beaconId = req.query.get("beaconId");
  const merchantPosId = req.query.get("merchantPosId");
  if (!storeId && !beaconId && !merchantPosId) fail(400, "1121", "filter not specific enough");
  let candidates: Pos[];
  if (merchantPosId)
    candidates = [d.world.posByMerchantPosId(caller, merchantPosId)].filter((p) => p !== undefined);
  else if (beaconId) candidates = [d.world.posByBeacon(beaconId)].filter((p) => p !== undefined);
  else candidates = [...d.world.poses.values()];
  const found = candidates.filter(
    (p) =>
      !p.deleted &&
      p.owner.clientId === caller.clientId &&
      p.owner.vat === caller.vat &&
      (!storeId || p.storeId === storeId) &&
      (!beaconId || p.beaconId.toLowerCase() === beaconId.toLowerCase()) &&
      (!merchantPosId || p.merchantPosId === merchantPosId),
  );
  return { status: 200, body: { posIds: found.map((p) => p.posId) } };
}
