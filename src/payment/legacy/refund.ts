import { formatAmount } from "../../core/money.js";
import type { RefundRequest, RefundResult } from "../driver.js";
import { isPaymentError, PaymentError } from "../errors.js";
import { type LegacyContext, posKey, statusBody, waitToRepeat } from "./context.js";
import { serviceCode } from "./errors.js";
import { amount, text } from "./read.js";
import type { LegacyBody } from "./transport.js";

/**
 * PaymentRefund by OrderId (seed; pos-legacy §8). A refund of the whole paid amount is sent as `"0.00"`
 * (§11: prefer full refunds), so that a repeat after a lost answer is safe: `3` "already refunded" means
 * done; at most `LIMITS.legacySends` sends (budget.ts). A lost partial refund is not repeated: it is
 * thrown as ambiguous for reconciliation.
 */
export async function refund(
  c: LegacyContext,
  req: RefundRequest,
  signal?: AbortSignal,
): Promise<RefundResult> {
  const { ref } = req;
  if (!Number.isSafeInteger(req.amount) || req.amount <= 0)
    throw new PaymentError("invalid", "refund: amount must be > 0");
  const op = ref.mode === "payment" ? "GetPaymentStatus" : "GetReservationStatus";
  const total = amount(await statusBody(c, ref, signal), "Amount", op);
  const full = total !== null && req.amount === total;
  // BulkRef is required but ignored for refunds (seed "BulkRef").
  const body = {
    ...posKey(c),
    OrderId: ref.orderId,
    Amount: full ? "0.00" : formatAmount(req.amount),
    BulkRef: c.o.bulkRef,
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return result(ref.orderId, await c.t.call("PaymentRefund", body, signal));
    } catch (e) {
      // A repeated full refund answered 3 "already refunded": the lost one was applied.
      if (attempt > 1 && isPaymentError(e, "refundRefused") && serviceCode(e) === 3) {
        return { refundId: ref.orderId, state: "captured", remainder: 0 };
      }
      if (!(e instanceof PaymentError) || !e.ambiguous) throw e;
      if (!full) {
        c.log?.warn(
          { orderId: ref.orderId },
          "partial refund answer lost; not repeated, flag for reconciliation",
        );
        throw new PaymentError(
          "unavailable",
          `PaymentRefund: partial refund answer lost (${e.message}); reconcile`,
          { ambiguous: true },
          { cause: e },
        );
      }
      if (!(await waitToRepeat(c, attempt, e, signal))) throw e;
    }
  }
}

function result(orderId: string, body: LegacyBody): RefundResult {
  return {
    refundId: text(body, "TransactionId", "PaymentRefund") ?? orderId,
    state: "captured",
    remainder: amount(body, "Remainder", "PaymentRefund"),
  };
}
