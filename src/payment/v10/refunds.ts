import type { Clock } from "../../core/clock.js";
import { amountToJson } from "../../core/money.js";
import type { RefundRequest, RefundResult } from "../driver.js";
import { PaymentError } from "../errors.js";
import { errorCodeOf, toPaymentError } from "./errors.js";
import { statusFailure } from "./http.js";
import { correlationIdFor } from "./ids.js";
import { parseRefund, record, str, type V10Refund } from "./parse.js";
import { readBody, type V10Transport } from "./transport.js";

export interface RefundContext {
  transport: V10Transport;
  currency: "DKK" | "EUR";
  clock: Clock;
  /** Upper bound of status polls while the refund is `Initiated` (default 100). */
  maxPolls?: number;
}

const enc = encodeURIComponent;
const CAPTURED: ReadonlySet<string> = new Set(["Captured", "ExpiredAndCaptured"]);

/**
 * Refund flow R1 (pos-v10 §8, §18): POST /v10/refunds with the journal's key, poll GET /v10/refunds/{id}
 * at its `pollDelayInMs` until it leaves `Initiated`, then capture it when `Reserved`. Repeating the whole
 * call with the same key is safe: the service returns the same refundId (§9) and a repeated capture of a
 * captured refund answers 200 (§19).
 */
export async function refundPayment(
  ctx: RefundContext,
  req: RefundRequest,
  signal?: AbortSignal,
): Promise<RefundResult> {
  const cid = correlationIdFor(`refund:${req.refundOrderId}`);
  const created = await ctx.transport.call(
    {
      op: "refund",
      method: "POST",
      path: "/v10/refunds",
      body: {
        paymentId: req.ref.id,
        refundOrderId: req.refundOrderId,
        amount: amountToJson(req.amount),
        currencyCode: ctx.currency,
      },
      idempotencyKey: req.idempotencyKey,
      correlationId: cid,
    },
    signal,
  );
  const refundId = readBody("refund", created, true, (b) => str(record(b, "refund"), "refundId"));

  let refund = await getRefund(ctx, refundId, cid, signal);
  const maxPolls = ctx.maxPolls ?? 100;
  for (let i = 0; refund.status === "Initiated"; i++) {
    if (i >= maxPolls) {
      throw new PaymentError("unavailable", `refund: still Initiated after ${maxPolls} polls`, {
        ambiguous: true,
      });
    }
    await ctx.clock.sleep(refund.pollDelayMs, signal);
    refund = await getRefund(ctx, refundId, cid, signal);
  }
  if (refund.status === "Reserved") {
    await captureRefund(ctx, refundId, cid, signal);
    return { refundId, state: "captured", remainder: null };
  }
  if (CAPTURED.has(refund.status)) return { refundId, state: "captured", remainder: null };
  if (refund.status.startsWith("Cancelled")) return { refundId, state: "cancelled", remainder: null };
  throw new PaymentError("unavailable", "refund: unknown refund status", { ambiguous: true });
}

async function getRefund(
  ctx: RefundContext,
  refundId: string,
  correlationId: string,
  signal?: AbortSignal,
): Promise<V10Refund> {
  const r = await ctx.transport.call(
    { op: "refund status", method: "GET", path: `/v10/refunds/${enc(refundId)}`, correlationId },
    signal,
  );
  return readBody("refund status", r, false, parseRefund);
}

/** POST /v10/refunds/{id}/capture; a 409 1351 is resolved by reading the refund (already captured → ok). */
async function captureRefund(
  ctx: RefundContext,
  refundId: string,
  correlationId: string,
  signal?: AbortSignal,
): Promise<void> {
  const r = await ctx.transport.call(
    {
      op: "refund capture",
      method: "POST",
      path: `/v10/refunds/${enc(refundId)}/capture`,
      naturallyIdempotent: true,
      correlationId,
      accept: [409],
    },
    signal,
  );
  if (r.status !== 409) return;
  if (errorCodeOf(r.body) === "1351") {
    const now = await getRefund(ctx, refundId, correlationId, signal);
    if (CAPTURED.has(now.status)) return;
  }
  throw toPaymentError("refund capture", statusFailure(409, r.body));
}
