import { formatAmount, type Minor } from "../../core/money.js";
import type { PaymentRef } from "../driver.js";
import { isPaymentError, PaymentError } from "../errors.js";
import {
  type LegacyContext,
  partialAllowed,
  posKey,
  queryStatus,
  statusBody,
  waitToRepeat,
} from "./context.js";
import { amount, text } from "./read.js";

/**
 * Capture and cancel with the lost-response rows of pos-legacy §11. Each mutation is sent at most
 * `LIMITS.legacySends` times (budget.ts); a repeat is decided by retry.ts after a jittered wait.
 */

/**
 * ReservationCapture (seed; pos-legacy §7): CaptureType Full sends `"0.00"` and needs `amount` equal to the
 * reserved amount; Partial sends the amount. No status shows "captured", so after a lost answer the
 * identical capture is sent again: `200` → done; `50` → "probably captured", thrown as an ambiguous
 * conflict for reconciliation (§11).
 */
export async function capture(
  c: LegacyContext,
  ref: PaymentRef,
  minor: Minor,
  signal?: AbortSignal,
): Promise<void> {
  if (ref.mode !== "reservation") {
    throw new PaymentError(
      "invalid",
      "capture: a direct payment moved its money at Done; there is nothing to capture",
    );
  }
  if (!Number.isSafeInteger(minor) || minor <= 0)
    throw new PaymentError("invalid", "capture: amount must be > 0");
  let sent: string;
  if (partialAllowed(c, ref)) {
    sent = formatAmount(minor);
  } else {
    const reserved = amount(await statusBody(c, ref, signal), "Amount", "GetReservationStatus");
    if (reserved === null) throw new PaymentError("notFound", `capture: no reservation ${ref.orderId}`);
    if (minor < reserved) {
      throw new PaymentError(
        "partialCaptureNotPossible",
        "capture: CaptureType Full captures only the reserved amount",
      );
    }
    if (minor > reserved) throw new PaymentError("invalid", "capture: amount is above the reserved amount");
    sent = "0.00";
  }
  const body = { ...posKey(c), OrderId: ref.orderId, Amount: sent, BulkRef: c.o.bulkRef };
  for (let attempt = 1; ; attempt++) {
    try {
      await c.t.call("ReservationCapture", body, signal);
      return;
    } catch (e) {
      if (attempt > 1 && isPaymentError(e, "conflict")) {
        c.log?.warn(
          { orderId: ref.orderId },
          "capture answer lost and the repeat was refused: probably captured",
        );
        throw new PaymentError(
          "conflict",
          "ReservationCapture: probably captured (answer lost, repeat refused)",
          { ambiguous: true, status: 400, serviceCode: "50" },
          { cause: e },
        );
      }
      if (!(e instanceof PaymentError) || !e.ambiguous) throw e;
      if (!(await waitToRepeat(c, attempt, e, signal))) throw e;
    }
  }
}

/** Cancels a reservation or a direct payment; resolves when it is cancelled or already gone (10 or 40). */
export async function cancel(c: LegacyContext, ref: PaymentRef, signal?: AbortSignal): Promise<void> {
  if (ref.mode === "reservation") return cancelReservation(c, ref, signal);
  return cancelPayment(c, ref, signal);
}

/** ReservationCancel(OrderId); after a lost answer or a 50: status 10 or 40 → done, else send once more. */
async function cancelReservation(c: LegacyContext, ref: PaymentRef, signal?: AbortSignal): Promise<void> {
  const body = { ...posKey(c), OrderId: ref.orderId };
  for (let attempt = 1; ; attempt++) {
    try {
      await c.t.call("ReservationCancel", body, signal);
      return;
    } catch (e) {
      if (!(e instanceof PaymentError) || !(e.ambiguous || e.code === "conflict")) throw e;
      const s = await queryStatus(c, ref, signal);
      if (s === 10 || s === 40) return;
      if (!e.ambiguous || !(await waitToRepeat(c, attempt, e, signal))) throw e;
    }
  }
}

/**
 * PaymentCancel acts on the PoS's current payment, not on an OrderId (seed), so the driver first checks
 * that the current payment is this one. Done (100) cannot be cancelled: refund it instead.
 */
async function cancelPayment(c: LegacyContext, ref: PaymentRef, signal?: AbortSignal): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const s = await queryStatus(c, ref, signal);
    if (s === 10 || s === 40) return;
    if (s === 100)
      throw new PaymentError("conflict", "PaymentCancel: the payment is Done (100); refund it instead");
    const current = await c.t.call("GetCurrentPayment", posKey(c), signal);
    if (text(current, "OrderId", "GetCurrentPayment") !== ref.orderId) return;
    try {
      await c.t.call("PaymentCancel", posKey(c), signal);
      return;
    } catch (e) {
      if (!(e instanceof PaymentError) || !(e.ambiguous || e.code === "conflict")) throw e;
      if (!(await waitToRepeat(c, attempt, e, signal))) throw e;
    }
  }
}
