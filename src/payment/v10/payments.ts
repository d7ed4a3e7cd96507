import { amountToJson, type Minor } from "../../core/money.js";
import type { PaymentObservation, PaymentRef } from "../driver.js";
import { PaymentError } from "../errors.js";
import { errorCodeOf, toPaymentError } from "./errors.js";
import { statusFailure } from "./http.js";
import { correlationIdFor } from "./ids.js";
import { idList, parsePayment, type V10Payment } from "./parse.js";
import { readBody, type V10Transport } from "./transport.js";

/** What the payment flows need from the driver. */
export interface PaymentContext {
  transport: V10Transport;
  currency: "DKK" | "EUR";
  /** The opened PoS's id; throws when `open()` has not succeeded yet. */
  posId(): string;
}

const enc = encodeURIComponent;

/** One CorrelationId per payment transaction (pos-v10 §3), derived from the order id. */
export function paymentCorrelation(orderId: string): string {
  return correlationIdFor(`payment:${orderId}`);
}

/** GET /v10/payments/{id} (pos-v10 §4). */
export async function getPayment(
  ctx: PaymentContext,
  paymentId: string,
  correlationId: string,
  signal?: AbortSignal,
): Promise<V10Payment> {
  const r = await ctx.transport.call(
    { op: "status", method: "GET", path: `/v10/payments/${enc(paymentId)}`, correlationId },
    signal,
  );
  return readBody("status", r, false, parsePayment);
}

/** GET /v10/payments?… → paymentIds (pos-v10 §13 filter semantics). */
export async function listPayments(
  ctx: PaymentContext,
  query: string,
  correlationId: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const r = await ctx.transport.call(
    { op: "list payments", method: "GET", path: `/v10/payments?${query}`, correlationId },
    signal,
  );
  return readBody("list payments", r, false, (b) => idList(b, "paymentIds"));
}

/** One status poll; the observation carries the caller's ref. */
export async function paymentStatus(
  ctx: PaymentContext,
  ref: PaymentRef,
  signal?: AbortSignal,
): Promise<PaymentObservation> {
  const p = await getPayment(ctx, ref.id, paymentCorrelation(ref.orderId), signal);
  return { ...p.observation, ref };
}

/**
 * Finds this PoS's payment with `orderId`: first among active and reserved payments, then among captured
 * ones (pos-v10 §8, §13). Null when neither list has it (a cancelled or expired payment is not listed).
 */
export async function lookupPayment(
  ctx: PaymentContext,
  orderId: string,
  signal?: AbortSignal,
): Promise<PaymentObservation | null> {
  const cid = paymentCorrelation(orderId);
  const base = `posId=${enc(ctx.posId())}&orderId=${enc(orderId)}`;
  for (const query of [base, `${base}&state=Captured`]) {
    const ids = await listPayments(ctx, query, cid, signal);
    const id = ids[0];
    if (id !== undefined) return (await getPayment(ctx, id, cid, signal)).observation;
  }
  return null;
}

/**
 * Active and reserved payments of this PoS, each read in full; with `newest`, only the last `newest` listed
 * are read (the list comes in creation order, oldest first), which bounds the reads (budget.ts `busy`).
 */
export async function findActivePayments(
  ctx: PaymentContext,
  signal?: AbortSignal,
  newest?: number,
): Promise<V10Payment[]> {
  const cid = correlationIdFor(`pos:${ctx.posId()}`);
  const listed = await listPayments(ctx, `posId=${enc(ctx.posId())}`, cid, signal);
  const ids = newest === undefined ? listed : listed.slice(-newest);
  const out: V10Payment[] = [];
  for (const id of ids) out.push(await getPayment(ctx, id, cid, signal));
  return out;
}

/**
 * POST /v10/payments/{id}/capture. Capture is naturally idempotent (pos-v10 §9), so it is retried. A 409
 * 1304/1307 is resolved by reading the payment: `Captured` with this amount means an earlier attempt was
 * applied (resolve); anything else is a conflict.
 */
export async function capturePayment(
  ctx: PaymentContext,
  ref: PaymentRef,
  amount: Minor,
  signal?: AbortSignal,
): Promise<void> {
  const cid = paymentCorrelation(ref.orderId);
  const r = await ctx.transport.call(
    {
      op: "capture",
      method: "POST",
      path: `/v10/payments/${enc(ref.id)}/capture`,
      body: { amount: amountToJson(amount) },
      naturallyIdempotent: true,
      correlationId: cid,
      accept: [409],
    },
    signal,
  );
  if (r.status !== 409) return;
  const code = errorCodeOf(r.body);
  if (code === "1304" || code === "1307") {
    const p = await getPayment(ctx, ref.id, cid, signal);
    if (p.status === "Captured" && p.observation.amount === amount) return;
  }
  throw toPaymentError("capture", statusFailure(409, r.body));
}

/**
 * POST /v10/payments/{id}/cancel, retried like capture. A 409 1300 is resolved by reading the payment:
 * any `CancelledBy…` state means it is cancelled already (resolve); otherwise a conflict.
 */
export async function cancelPayment(
  ctx: PaymentContext,
  ref: PaymentRef,
  signal?: AbortSignal,
): Promise<void> {
  const cid = paymentCorrelation(ref.orderId);
  const r = await ctx.transport.call(
    {
      op: "cancel",
      method: "POST",
      path: `/v10/payments/${enc(ref.id)}/cancel`,
      naturallyIdempotent: true,
      correlationId: cid,
      accept: [409],
    },
    signal,
  );
  if (r.status !== 409) return;
  if (errorCodeOf(r.body) === "1300") {
    const p = await getPayment(ctx, ref.id, cid, signal);
    if (p.status.startsWith("CancelledBy")) return;
  }
  throw toPaymentError("cancel", statusFailure(409, r.body));
}

/** Guard used by `start` for the engine-only `payment` mode. */
export function assertReservation(mode: string | undefined): void {
  if (mode !== undefined && mode !== "reservation") {
    throw new PaymentError("invalid", "V10 supports only reservations (initiate, then capture or cancel)");
  }
}
