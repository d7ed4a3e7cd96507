import type { Clock } from "../../core/clock.js";
import { amountToJson } from "../../core/money.js";
import { LIMITS } from "../budget.js";
import type { RefundRequest, RefundResult } from "../driver.js";
import { isPaymentError, PaymentError } from "../errors.js";
import { pollRetryDelay } from "../retry.js";
import { errorCodeOf, toPaymentError } from "./errors.js";
import { statusFailure } from "./http.js";
import { correlationIdFor } from "./ids.js";
import { parseRefund, record, str, type V10Refund } from "./parse.js";
import { readBody, type V10Transport } from "./transport.js";

export interface RefundContext {
  transport: V10Transport;
  currency: "DKK" | "EUR";
  /** Poll waits run on this clock. */
  clock: Clock;
  /** Jitter of the wait after a failed poll, in [0, 1). */
  random: () => number;
}

const enc = encodeURIComponent;
const CAPTURED: ReadonlySet<string> = new Set(["Captured", "ExpiredAndCaptured"]);
/** The poll delay assumed before the service gave one (pos-v10 §5: the refund example is 100 ms). */
const FIRST_POLL_DELAY_MS = 100;

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

  const refund = await pollRefund(ctx, refundId, cid, signal);
  if (refund.status === "Reserved") {
    await captureRefund(ctx, refundId, cid, signal);
    return { refundId, state: "captured", remainder: null };
  }
  if (CAPTURED.has(refund.status)) return { refundId, state: "captured", remainder: null };
  if (refund.status.startsWith("Cancelled")) return { refundId, state: "cancelled", remainder: null };
  throw new PaymentError("unavailable", "refund: unknown refund status", { ambiguous: true });
}

/**
 * Reads the refund until it leaves `Initiated`: the first read and at most `LIMITS.refundPolls` more, each
 * sent once (this loop is their retry, budget.ts), spaced by the refund's `pollDelayInMs`. A read that
 * fails with `unavailable` counts as a poll and is followed by the last delay plus jitter (pos-v10 §10);
 * any other error ends the call. Out of polls: ambiguous `unavailable` (the refund exists; the same call
 * with the same key resumes it).
 */
async function pollRefund(
  ctx: RefundContext,
  refundId: string,
  correlationId: string,
  signal?: AbortSignal,
): Promise<V10Refund> {
  let serviceDelay = FIRST_POLL_DELAY_MS;
  let wait = 0;
  let lastError: PaymentError | null = null;
  for (let poll = 0; ; poll++) {
    if (poll > 0) await ctx.clock.sleep(wait, signal);
    try {
      const refund = await getRefund(ctx, refundId, correlationId, signal, true);
      if (refund.status !== "Initiated") return refund;
      serviceDelay = refund.pollDelayMs;
      wait = serviceDelay;
      lastError = null;
    } catch (e) {
      if (!isPaymentError(e, "unavailable")) throw e;
      lastError = e;
      wait = pollRetryDelay(serviceDelay, ctx.random);
    }
    if (poll >= LIMITS.refundPolls) {
      const why = lastError === null ? "still Initiated" : "no answer";
      throw new PaymentError(
        "unavailable",
        `refund: ${why} after ${LIMITS.refundPolls} polls`,
        { ambiguous: true },
        lastError === null ? undefined : { cause: lastError },
      );
    }
  }
}

async function getRefund(
  ctx: RefundContext,
  refundId: string,
  correlationId: string,
  signal?: AbortSignal,
  poll = false,
): Promise<V10Refund> {
  const r = await ctx.transport.call(
    { op: "refund status", method: "GET", path: `/v10/refunds/${enc(refundId)}`, correlationId, poll },
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
