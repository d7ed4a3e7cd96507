import { PaymentError } from "../errors.js";
import { errorCodeOf, toPaymentError } from "./errors.js";
import { statusFailure } from "./http.js";
import { correlationIdFor } from "./ids.js";
import type { V10DriverOptions } from "./options.js";
import { idList, parsePos, record, str, type V10Pos } from "./parse.js";
import { readBody, type V10Transport } from "./transport.js";

export type OnboardOptions = Pick<
  V10DriverOptions,
  | "storeId"
  | "merchantBrandId"
  | "merchantLocationId"
  | "merchantPosId"
  | "posName"
  | "beaconId"
  | "supportedBeaconTypes"
  | "requirePaymentBeforeCheckin"
  | "newKey"
>;

const enc = encodeURIComponent;

/**
 * Brings the PoS into service (seed V10 rule 2, pos-v10 §12): resolve the store, find the PoS by
 * merchantPosId, and create it when missing. A PoS is immutable (pos-v10 §5), so when the configured
 * beaconId, name, store, beacon types or check-in rule differ it is deleted and created again; a
 * service-generated beacon is carried over so printed or shown QR codes stay valid.
 */
export async function onboard(t: V10Transport, o: OnboardOptions, signal?: AbortSignal): Promise<V10Pos> {
  const cid = correlationIdFor(`pos:${o.merchantPosId}`);
  const storeId = o.storeId ?? (await findStore(t, o, cid, signal));
  const existing = await findPos(t, o.merchantPosId, cid, signal);
  if (existing && matches(existing, storeId, o)) return existing;
  const beaconId = o.beaconId ?? existing?.beaconId ?? null;
  if (existing) await deletePos(t, existing.posId, cid, signal);
  return createPos(t, o, storeId, beaconId, cid, signal);
}

function matches(p: V10Pos, storeId: string, o: OnboardOptions): boolean {
  const types = new Set(p.supportedBeaconTypes);
  return (
    p.storeId === storeId &&
    p.name === o.posName &&
    (o.beaconId === null || p.beaconId === o.beaconId) &&
    p.requirePaymentBeforeCheckin === o.requirePaymentBeforeCheckin &&
    types.size === new Set(o.supportedBeaconTypes).size &&
    o.supportedBeaconTypes.every((b) => types.has(b))
  );
}

/** GET /v10/stores?merchantBrandId=&merchantLocationId= (pos-v10 §12 store lookup). */
async function findStore(
  t: V10Transport,
  o: OnboardOptions,
  cid: string,
  signal?: AbortSignal,
): Promise<string> {
  if (o.merchantBrandId === null || o.merchantLocationId === null) {
    throw new PaymentError("invalid", "open: storeId or merchantBrandId + merchantLocationId is required");
  }
  const r = await t.call(
    {
      op: "store lookup",
      method: "GET",
      path: `/v10/stores?merchantBrandId=${enc(o.merchantBrandId)}&merchantLocationId=${enc(o.merchantLocationId)}`,
      correlationId: cid,
    },
    signal,
  );
  const id = readBody("store lookup", r, false, (b) => idList(b, "storeIds"))[0];
  if (id === undefined) throw new PaymentError("notFound", "open: no store for the brand and location");
  return id;
}

async function findPos(t: V10Transport, merchantPosId: string, cid: string, signal?: AbortSignal) {
  const r = await t.call(
    {
      op: "pos lookup",
      method: "GET",
      path: `/v10/pointofsales?merchantPosId=${enc(merchantPosId)}`,
      correlationId: cid,
    },
    signal,
  );
  const id = readBody("pos lookup", r, false, (b) => idList(b, "posIds"))[0];
  return id === undefined ? null : getPos(t, id, cid, signal);
}

async function getPos(t: V10Transport, posId: string, cid: string, signal?: AbortSignal): Promise<V10Pos> {
  const r = await t.call(
    { op: "pos read", method: "GET", path: `/v10/pointofsales/${enc(posId)}`, correlationId: cid },
    signal,
  );
  return readBody("pos read", r, false, parsePos);
}

/** DELETE is retried; a 404 after a retry means the first attempt was applied (certification O2). */
async function deletePos(t: V10Transport, posId: string, cid: string, signal?: AbortSignal): Promise<void> {
  await t.call(
    {
      op: "pos delete",
      method: "DELETE",
      path: `/v10/pointofsales/${enc(posId)}`,
      correlationId: cid,
      accept: [404],
    },
    signal,
  );
}

/**
 * POST /v10/pointofsales with ONE new key reused by every retry (certification O1), then reads the PoS back
 * (the service generates the beaconId when none is given, pos-v10 §5).
 */
async function createPos(
  t: V10Transport,
  o: OnboardOptions,
  storeId: string,
  beaconId: string | null,
  cid: string,
  signal?: AbortSignal,
): Promise<V10Pos> {
  const body: Record<string, unknown> = {
    merchantPosId: o.merchantPosId,
    storeId,
    name: o.posName,
    supportedBeaconTypes: o.supportedBeaconTypes,
    requirePaymentBeforeCheckin: o.requirePaymentBeforeCheckin,
  };
  if (beaconId !== null) body.beaconId = beaconId;
  const r = await t.call(
    {
      op: "pos create",
      method: "POST",
      path: "/v10/pointofsales",
      body,
      idempotencyKey: o.newKey(),
      correlationId: cid,
      accept: [409],
    },
    signal,
  );
  if (r.status === 409) {
    // 1200: a PoS with our merchantPosId appeared meanwhile (e.g. a create whose key had expired): use it.
    const raced = errorCodeOf(r.body) === "1200" ? await findPos(t, o.merchantPosId, cid, signal) : null;
    if (raced && matches(raced, storeId, o)) return raced;
    throw toPaymentError("pos create", statusFailure(409, r.body));
  }
  const posId = readBody("pos create", r, true, (b) => str(record(b, "pos create"), "posId"));
  return getPos(t, posId, cid, signal);
}
