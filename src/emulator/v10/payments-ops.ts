import type { EmuRequest, EmuResponse } from "../types.js";
import { checkOwner, recordPoll } from "./access.js";
import { jsonBody } from "./body.js";
import { fail } from "./errors.js";
import type { Caller } from "./headers.js";
import type { V10Deps } from "./machine.js";
import { finish, isActive, ledgerScope } from "./machine.js";
import type { Payment } from "./model.js";
import { amount } from "./validate.js";
import { paymentView } from "./views.js";

/** `GET /v10/payments/{id}` (pos-v10 §5): 1401 other integrator, 1411 other merchant; counts early polls (§10). */
export function getPayment(d: V10Deps, caller: Caller, p: Payment): EmuResponse {
  checkOwner(p.owner, caller, "1401", "1411");
  const delay = d.config.pollDelayMs;
  if (recordPoll(p, caller.clientId, d.clock.now(), delay)) d.stats.earlyPoll(caller.clientId);
  return { status: 200, body: paymentView(p, delay) };
}

/**
 * `GET /v10/payments?posId=&orderId=&state=` (pos-v10 §13): neither posId nor orderId → 1109; without
 * `state` only active and Reserved payments, with `state=Captured` captured ones; with an orderId only the
 * latest matching payment. Only the caller's own payments.
 */
export function listPayments(d: V10Deps, req: EmuRequest, caller: Caller): EmuResponse {
  const posId = req.query.get("posId");
  const orderId = req.query.get("orderId");
  const state = req.query.get("state");
  if (!posId && !orderId) fail(400, "1109", "filter not specific enough: give posId or orderId");
  if (state !== null && state !== "Captured") fail(400, "1099", "state must be Captured");
  const wanted = (p: Payment): boolean =>
    p.owner.clientId === caller.clientId &&
    p.owner.vat === caller.vat &&
    (!posId || p.pos.posId === posId) &&
    (!orderId || p.orderId === orderId) &&
    (state === "Captured" ? p.status === "Captured" : isActive(p.status) || p.status === "Reserved");
  let found: Payment[];
  if (orderId) {
    found = d.world.paymentsByOrder(caller, orderId).filter(wanted);
    const latest = found.reduce<Payment | null>((a, p) => (a === null || p.seq > a.seq ? p : a), null);
    found = latest === null ? [] : [latest];
  } else {
    const pos = posId ? d.world.poses.get(posId) : undefined;
    found = pos ? [...pos.payments].filter(wanted).sort((a, b) => a.seq - b.seq) : [];
  }
  return { status: 200, body: { paymentIds: found.map((p) => p.paymentId) } };
}

/**
 * `POST /v10/payments/{id}/capture` (pos-v10 §7): 1401/1407 ownership, 1102 amount, then state: a repeated
 * capture of the same amount 200, another amount 1307, not Reserved 1304, above the reservation 1305, partial
 * when `partialCapturePossible` is false 1308. The capture releases the rest of the reservation.
 */
export function capturePayment(d: V10Deps, req: EmuRequest, caller: Caller, p: Payment): EmuResponse {
  checkOwner(p.owner, caller, "1401", "1407");
  const value = amount(jsonBody(req, ["amount"]));
  if (p.status === "Captured") {
    if (p.capturedAmount === value) return { status: 200 };
    fail(409, "1307", "already captured with a different amount");
  }
  if (p.status !== "Reserved" || p.amount === null) fail(409, "1304", "payment not reserved");
  if (value > p.amount) fail(409, "1305", "amount above the reserved amount");
  if (value < p.amount && (p.user?.features.includes("noPartialCapture") ?? false)) {
    fail(409, "1308", "partial capture not possible");
  }
  const now = d.clock.now();
  p.status = "Captured";
  p.since = now;
  p.capturedAmount = value;
  p.capturedAt = now;
  d.world.retireCaptured(p, now);
  d.ledger.record({
    interface: "v10",
    ...ledgerScope(d, p),
    id: p.paymentId,
    paymentId: null,
    orderId: p.orderId,
    kind: "captured",
    amount: value,
  });
  return { status: 200 };
}

/**
 * `POST /v10/payments/{id}/cancel` (pos-v10 §7, §19): possible until Captured or expired; a repeated cancel
 * of a CancelledByClient payment answers 200; other final states 1300. Cancelling a Reserved payment
 * releases the reservation (ledger `cancelled`).
 */
export function cancelPayment(d: V10Deps, req: EmuRequest, caller: Caller, p: Payment): EmuResponse {
  checkOwner(p.owner, caller, "1401", "1408");
  jsonBody(req, [], true);
  if (p.status === "CancelledByClient") return { status: 200 };
  const wasReserved = p.status === "Reserved";
  if (!wasReserved && !isActive(p.status))
    fail(409, "1300", `payment cannot be cancelled in state ${p.status}`);
  finish(d, p, "CancelledByClient", d.clock.now());
  if (wasReserved) {
    d.ledger.record({
      interface: "v10",
      ...ledgerScope(d, p),
      id: p.paymentId,
      paymentId: null,
      orderId: p.orderId,
      kind: "cancelled",
      amount: p.amount ?? 0,
    });
  }
  return { status: 200 };
}
