import { amountToJson } from "../../core/money.js";
import { LIMITS } from "../budget.js";
import type { PaymentRef, StartRequest } from "../driver.js";
import { PaymentError } from "../errors.js";
import { errorCodeOf, toPaymentError } from "./errors.js";
import { statusFailure } from "./http.js";
import { deriveRecoveryKey } from "./ids.js";
import { ACTIVE_STATUSES, record, str } from "./parse.js";
import {
  assertReservation,
  cancelPayment,
  findActivePayments,
  type PaymentContext,
  paymentCorrelation,
} from "./payments.js";
import { readBody } from "./transport.js";

export interface StartContext extends PaymentContext {
  /** Journal ownership of an order as a live session (decides 1301 recovery). */
  ownsOrder(orderId: string): boolean;
}

/**
 * Initiates a payment (POST /v10/payments with the journal's key). On 409 1301 runs the certification
 * recovery P4 once (pos-v10 §12, §18): find the active payment of this PoS; when the journal owns its order
 * as a live session throw `busy` (the engine resolves its own session), else cancel it and initiate again
 * with the derived key of ids.ts (a new request). A second 1301 is `busy`.
 */
export async function startPayment(
  ctx: StartContext,
  req: StartRequest,
  signal?: AbortSignal,
): Promise<PaymentRef> {
  assertReservation(req.mode);
  const first = await initiate(ctx, req, req.idempotencyKey, signal);
  if (first !== null) return first;

  await clearActivePayment(ctx, signal);
  const second = await initiate(ctx, req, deriveRecoveryKey(req.idempotencyKey), signal);
  if (second !== null) return second;
  throw new PaymentError("busy", "start: another payment became active on the PoS", {
    status: 409,
    serviceCode: "1301",
  });
}

/** One initiate; null when the service answered 1301. */
async function initiate(
  ctx: StartContext,
  req: StartRequest,
  key: string,
  signal?: AbortSignal,
): Promise<PaymentRef | null> {
  const r = await ctx.transport.call(
    {
      op: "start",
      method: "POST",
      path: "/v10/payments",
      body: {
        posId: ctx.posId(),
        orderId: req.orderId,
        amount: amountToJson(req.amount),
        currencyCode: ctx.currency,
        // pos-v10 §6: a vending unit captures right after the vend.
        plannedCaptureDelay: "None",
      },
      idempotencyKey: key,
      correlationId: paymentCorrelation(req.orderId),
      accept: [409],
    },
    signal,
  );
  if (r.status === 409) {
    if (errorCodeOf(r.body) === "1301") return null;
    throw toPaymentError("start", statusFailure(409, r.body));
  }
  const paymentId = readBody("start", r, true, (b) => str(record(b, "initiate"), "paymentId"));
  return { id: paymentId, orderId: req.orderId, mode: "reservation" };
}

/**
 * Cancels the PoS's active payment unless the journal owns it (then `busy`). Reads at most the newest
 * `LIMITS.busyReads` listed payments: a PoS has one active payment, and the rest are reserved ones.
 */
async function clearActivePayment(ctx: StartContext, signal?: AbortSignal): Promise<void> {
  const payments = await findActivePayments(ctx, signal, LIMITS.busyReads);
  for (const p of payments) {
    if (!ACTIVE_STATUSES.has(p.status)) continue;
    const { ref } = p.observation;
    if (ctx.ownsOrder(ref.orderId)) {
      throw new PaymentError("busy", "start: the PoS's active payment belongs to a live session", {
        status: 409,
        serviceCode: "1301",
      });
    }
    // One active payment per PoS (the 1301 rule): cancel it and stop.
    await cancelPayment(ctx, ref, signal);
    return;
  }
}
