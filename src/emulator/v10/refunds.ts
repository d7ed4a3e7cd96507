import { randomUUID } from "node:crypto";
import type { EmuRequest, EmuResponse } from "../types.js";
import { checkOwner, keyScope, ownerOf } from "./access.js";
import { canonical, jsonBody } from "./body.js";
import { fail } from "./errors.js";
import type { Caller } from "./headers.js";
import { idempotencyKey } from "./headers.js";
import type { V10Deps } from "./machine.js";
import { ledgerScope, refreshPayment } from "./machine.js";
import type { Refund, RefundStatus } from "./model.js";
import { CURRENCIES, REFUND_AUTO_CAPTURE_MS, REFUND_MAX_AGE_MS } from "./model.js";
import { amount, oneOf, str, text } from "./validate.js";
import { refundView } from "./views.js";

function moveRefund(d: V10Deps, r: Refund, status: RefundStatus): void {
  r.status = status;
  if (status !== "Initiated" && status !== "Reserved") d.world.liveRefunds.delete(r);
  if (status === "Captured" || status === "ExpiredAndCaptured") {
    const p = r.payment;
    d.ledger.record({
      interface: "v10",
      ...ledgerScope(d, p),
      id: r.refundId,
      paymentId: p.paymentId,
      orderId: p.orderId,
      kind: "refunded",
      amount: r.amount,
      currency: r.currency,
    });
  }
}

/** When a refund's next time rule is due (`refreshRefund`), or null when none applies. */
export function refundDue(r: Refund): number | null {
  if (r.status === "Initiated") return r.reserveDueAt;
  if (r.status === "Reserved" && r.reservedAt !== null) return r.reservedAt + REFUND_AUTO_CAPTURE_MS;
  return null;
}

/** Time rules of a refund (pos-v10 §8): Initiated → Reserved; 24 h in Reserved → ExpiredAndCaptured. */
export function refreshRefund(d: V10Deps, r: Refund, now: number): void {
  if (r.status === "Initiated" && now >= r.reserveDueAt) {
    r.status = "Reserved";
    r.reservedAt = r.reserveDueAt;
  }
  if (r.status === "Reserved" && r.reservedAt !== null && now >= r.reservedAt + REFUND_AUTO_CAPTURE_MS) {
    moveRefund(d, r, "ExpiredAndCaptured");
  }
}

/** Runs the refund time rules of every live refund. */
export function tickRefunds(d: V10Deps, now: number): void {
  for (const r of d.world.liveRefunds) refreshRefund(d, r, now);
}

/**
 * `POST /v10/refunds` (pos-v10 §8): 1114 refundOrderId, 1102 amount, then the idempotency key, then 1001
 * unknown payment, 1401 another owner's payment, 1354 not captured, 1365 other currency, 1366 captured more
 * than 90 days ago, 1367 refunds above the captured amount, 1368 above the store's balance.
 */
export async function createRefund(d: V10Deps, req: EmuRequest, caller: Caller): Promise<EmuResponse> {
  const key = idempotencyKey(req);
  const body = jsonBody(req, ["paymentId", "refundOrderId", "amount", "currencyCode"]);
  const paymentId = str(body, "paymentId");
  const refundOrderId = text(body, "refundOrderId", "1114");
  const value = amount(body);
  const currency = oneOf(body, "currencyCode", CURRENCIES);
  return d.idempotency.run(keyScope(caller, req.method, req.path), key, canonical(body), req.hold, () => {
    const now = d.clock.now();
    const p = d.world.payments.get(paymentId);
    if (p === undefined) fail(409, "1001", "payment not found");
    // pos-v10 §11: no "other merchant" code here; the other-integrator code serves both.
    checkOwner(p.owner, caller, "1401", "1401");
    refreshPayment(d, p, now);
    if (p.status !== "Captured" || p.capturedAmount === null || p.capturedAt === null)
      fail(409, "1354", "payment not captured");
    if (p.currency !== currency) fail(409, "1365", "currency differs from the payment's");
    if (now - p.capturedAt > REFUND_MAX_AGE_MS) fail(409, "1366", "payment too old");
    if (p.refunded + value > p.capturedAmount) fail(409, "1367", "amount too high");
    const store = d.world.stores.get(p.pos.storeId);
    if (store === undefined || store.balance < value)
      fail(409, "1368", "amount exceeds the store's available balance");
    store.balance -= value;
    p.refunded += value;
    const r: Refund = {
      refundId: randomUUID(),
      payment: p,
      owner: ownerOf(caller),
      refundOrderId,
      amount: value,
      currency,
      status: "Initiated",
      reserveDueAt: now + d.config.refundReserveMs,
      reservedAt: null,
    };
    p.refunds.push(r);
    d.world.refunds.set(r.refundId, r);
    d.world.liveRefunds.add(r);
    refreshRefund(d, r, now);
    return { status: 200, body: { refundId: r.refundId } };
  });
}

/** The refund with this id after applying due time rules; `notFoundCode` for the 404 (null = no body). */
export function findRefund(d: V10Deps, refundId: string, notFoundCode: string | null): Refund {
  const r = d.world.refunds.get(refundId);
  if (r === undefined) fail(404, notFoundCode, "refund not found");
  refreshRefund(d, r, d.clock.now());
  return r;
}

/** `GET /v10/refunds/{id}`: 1402 for any other owner. */
export function getRefund(d: V10Deps, caller: Caller, r: Refund): EmuResponse {
  checkOwner(r.owner, caller, "1402", "1402");
  return { status: 200, body: refundView(r, d.config.refundPollDelayMs) };
}

/** `GET /v10/refunds?paymentId=` (pos-v10 §13): missing → 1110; only the caller's refunds. */
export function listRefunds(d: V10Deps, req: EmuRequest, caller: Caller): EmuResponse {
  const paymentId = req.query.get("paymentId");
  if (!paymentId) fail(400, "1110", "filter not specific enough: give paymentId");
  const p = d.world.payments.get(paymentId);
  const ids = (p?.refunds ?? [])
    .filter((r) => r.owner.clientId === caller.clientId && r.owner.vat === caller.vat)
    .map((r) => r.refundId);
  return { status: 200, body: { refundIds: ids } };
}

/** `POST /v10/refunds/{id}/capture` (pos-v10 §8, §19): Reserved → Captured; Captured again 200; else 1351. */
export function captureRefund(d: V10Deps, req: EmuRequest, caller: Caller, r: Refund): EmuResponse {
  checkOwner(r.owner, caller, "1402", "1402");
  jsonBody(req, [], true);
  if (r.status === "Captured") return { status: 200 };
  if (r.status !== "Reserved") fail(409, "1351", "refund not reserved");
  moveRefund(d, r, "Captured");
  return { status: 200 };
}

/**
 * `POST /v10/refunds/{id}/cancel` (pos-v10 §8): Initiated or Reserved → CancelledByClient, the amount goes
 * back to the store balance; a repeated cancel answers 200; Captured, ExpiredAndCaptured, CancelledByService
 * → 1352.
 */
export function cancelRefund(d: V10Deps, req: EmuRequest, caller: Caller, r: Refund): EmuResponse {
  checkOwner(r.owner, caller, "1402", "1402");
  jsonBody(req, [], true);
  if (r.status === "CancelledByClient") return { status: 200 };
  if (r.status !== "Initiated" && r.status !== "Reserved")
    fail(409, "1352", `refund cannot be cancelled in state ${r.status}`);
  moveRefund(d, r, "CancelledByClient");
  r.payment.refunded -= r.amount;
  const store = d.world.stores.get(r.payment.pos.storeId);
  if (store) store.balance += r.amount;
  return { status: 200 };
}
