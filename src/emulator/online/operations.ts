/**
 * The money operations on an online payment (seed 002 §Online payments): captures and cancels of the
 * authorized remainder (a cancel before authorization cancels the payment), refunds of what was captured,
 * and the status an authorized payment settles in once nothing remains.
 */
import type { LedgerKind } from "../types.js";
import type { OnlinePayment, PaymentOp } from "./model.js";
import { conflict, invalid } from "./validate.js";

/** Authorized and not yet captured, cancelled or expired. */
export function remaining(p: OnlinePayment): number {
  return p.authorized - p.captured - p.cancelled - p.expired;
}

/** An authorized payment with nothing left is Captured, ReservationExpired or Cancelled. */
export function settleStatus(p: OnlinePayment): void {
  if (p.status !== "Authorized" || remaining(p) > 0) return;
  p.status = p.captured > 0 ? "Captured" : p.expired > 0 ? "ReservationExpired" : "Cancelled";
}

/**
 * Applies a checked capture, cancel or refund of `amount` as operation `id` (409 on the state or an amount
 * too high); `record` writes its ledger entry.
 */
export function applyOperation(
  p: OnlinePayment,
  op: PaymentOp,
  id: string,
  amount: number,
  attempt: unknown,
  record: (kind: LedgerKind, id: string, amount: number) => void,
): void {
  if (op === "capture") {
    if (p.status !== "Authorized") conflict("InvalidState", `a ${p.status} payment cannot be captured`);
    if (typeof attempt === "string" && attempt.toLowerCase() !== p.succeededAttemptId)
      invalid("authorizationAttemptId", "is not the succeeded authorization attempt");
    if (amount > remaining(p)) conflict("AmountTooHigh", `at most ${remaining(p)} can be captured`);
    p.captured += amount;
    record("captured", id, amount);
  } else if (op === "cancel") {
    if (p.status === "Initiated" || p.status === "AwaitingAuthorization") {
      if (amount > p.input.amount) conflict("AmountTooHigh", `at most ${p.input.amount} can be cancelled`);
      p.status = "Cancelled";
    } else {
      if (p.status !== "Authorized") conflict("InvalidState", `a ${p.status} payment cannot be cancelled`);
      if (amount > remaining(p)) conflict("AmountTooHigh", `at most ${remaining(p)} can be cancelled`);
      p.cancelled += amount;
      record("cancelled", id, amount);
    }
  } else {
    if (p.captured === 0) conflict("InvalidState", "nothing was captured");
    if (amount > p.captured - p.refunded)
      conflict("AmountTooHigh", `at most ${p.captured - p.refunded} can be refunded`);
    p.refunded += amount;
    record("refunded", id, amount);
  }
  settleStatus(p);
}
