import { randomUUID } from "node:crypto";
import type { EmuRequest, EmuResponse } from "../types.js";
import { checkOwner, keyScope, ownerOf } from "./access.js";
import { canonical, jsonBody } from "./body.js";
import { fail } from "./errors.js";
import type { Caller } from "./headers.js";
import { idempotencyKey } from "./headers.js";
import type { V10Deps } from "./machine.js";
import { activePayment, currentCheckin, pair } from "./machine.js";
import type { CaptureDelay, Currency, Payment, Restrictions } from "./model.js";
import { CAPTURE_DELAYS, CURRENCIES } from "./model.js";
import { amount, oneOf, optionalText, str, text } from "./validate.js";

/** The amount part shared by initiate and ready (pos-v10 §5). */
export interface Terms {
  amount: number;
  currency: Currency;
  plannedCaptureDelay: CaptureDelay;
  restrictions: Restrictions | null;
  merchantPaymentLabel: string | null;
}

const TERMS_FIELDS = [
  "amount",
  "currencyCode",
  "plannedCaptureDelay",
  "restrictions",
  "merchantPaymentLabel",
];

function restrictions(body: Record<string, unknown>): Restrictions | null {
  const r = body.restrictions;
  if (r === undefined || r === null) return null;
  if (typeof r !== "object" || Array.isArray(r)) fail(400, "1099", "restrictions must be an object or null");
  const out: Restrictions = {};
  for (const [key, value] of Object.entries(r)) {
    if (key !== "debitCardDisallowed" && key !== "creditCardDisallowed")
      fail(400, "1099", `unknown field restrictions.${key.slice(0, 40)}`);
    if (value !== null && typeof value !== "boolean")
      fail(400, "1099", `restrictions.${key} must be a boolean or null`);
    out[key] = value;
  }
  return out;
}

/** Reads the payment terms: amount 1102, label 1117, the enums 1099. */
export function readTerms(body: Record<string, unknown>): Terms {
  return {
    amount: amount(body),
    currency: oneOf(body, "currencyCode", CURRENCIES),
    plannedCaptureDelay: oneOf(body, "plannedCaptureDelay", CAPTURE_DELAYS),
    restrictions: restrictions(body),
    merchantPaymentLabel: optionalText(body, "merchantPaymentLabel", "1117"),
  };
}

/** Field names of the ready request. */
export const READY_FIELDS = TERMS_FIELDS;

/**
 * `POST /v10/payments` and `POST /v10/payments/prepare` (pos-v10 §4, §7, §9): validation (400), then the
 * idempotency key (replay or 1306), then the PoS: unknown or deleted 1000, other integrator or merchant 1400,
 * store not activated 1204, an active payment 1301. A checked-in user pairs at once (IssuedToUser / Paired).
 */
export async function createPayment(
  d: V10Deps,
  req: EmuRequest,
  caller: Caller,
  prepared: boolean,
): Promise<EmuResponse> {
  const key = idempotencyKey(req);
  const body = jsonBody(req, prepared ? ["posId", "orderId"] : ["posId", "orderId", ...TERMS_FIELDS]);
  const posId = str(body, "posId");
  const orderId = text(body, "orderId", "1113");
  const terms = prepared ? null : readTerms(body);
  return d.idempotency.run(keyScope(caller, req.method, req.path), key, canonical(body), req.hold, () => {
    const now = d.clock.now();
    const pos = d.world.poses.get(posId);
    if (pos === undefined || pos.deleted) fail(409, "1000", "point of sale not found");
    // pos-v10 §11: initiate/prepare have no "other merchant" code; the other-integrator code serves both.
    checkOwner(pos.owner, caller, "1400", "1400");
    if (d.world.stores.get(pos.storeId)?.activated !== true) fail(409, "1204", "the store is not activated");
    if (activePayment(d, pos, now) !== null)
      fail(409, "1301", "a payment is already active on the point of sale");
    const p: Payment = {
      paymentId: randomUUID(),
      seq: d.world.nextSeq(),
      pos,
      owner: ownerOf(caller),
      orderId,
      status: prepared ? "Prepared" : "Initiated",
      since: now,
      prepared,
      readied: null,
      amount: terms?.amount ?? null,
      currency: terms?.currency ?? null,
      plannedCaptureDelay: terms?.plannedCaptureDelay ?? null,
      restrictions: terms?.restrictions ?? null,
      merchantPaymentLabel: terms?.merchantPaymentLabel ?? null,
      user: null,
      acceptDueAt: null,
      expiresAt: null,
      capturedAmount: null,
      capturedAt: null,
      refunded: 0,
      refunds: [],
      polledBy: null,
      polledAt: 0,
    };
    d.world.addPayment(p);
    pos.active = p;
    const checkin = currentCheckin(d, pos, now);
    if (checkin !== null) {
      pair(p, checkin.user, now);
      pos.checkin = null;
      d.world.checkins.delete(pos);
    }
    return { status: 200, body: { paymentId: p.paymentId } };
  });
}

/**
 * `POST /v10/payments/{id}/ready` (pos-v10 §7): only on a prepared payment not yet readied (Prepared →
 * Initiated, Paired → IssuedToUser); a repeated identical ready answers 200 (§19); otherwise 1303.
 */
export function readyPayment(d: V10Deps, req: EmuRequest, caller: Caller, p: Payment): EmuResponse {
  checkOwner(p.owner, caller, "1401", "1406");
  const body = jsonBody(req, READY_FIELDS);
  const terms = readTerms(body);
  const request = canonical(body);
  if (p.prepared && p.readied === request) return { status: 200 };
  if (p.status !== "Prepared" && p.status !== "Paired") fail(409, "1303", "payment must be prepared first");
  const now = d.clock.now();
  p.readied = request;
  p.amount = terms.amount;
  p.currency = terms.currency;
  p.plannedCaptureDelay = terms.plannedCaptureDelay;
  p.restrictions = terms.restrictions;
  p.merchantPaymentLabel = terms.merchantPaymentLabel;
  p.status = p.status === "Paired" ? "IssuedToUser" : "Initiated";
  p.since = now;
  return { status: 200 };
}
