import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { Minor } from "../core/money.js";
import type { Intent } from "../journal/journal.js";
import type { PaymentDriver, PaymentRef, PaymentState, StartRequest } from "../payment/driver.js";
import { PaymentError } from "../payment/errors.js";
import type { SettleAction } from "./types.js";

/**
 * The engine's use of a payment driver for the two mutations that matter: starting a payment and settling
 * it. Both resolve ambiguous outcomes (timeout, reset, 5xx) by asking the service, never by guessing
 * (reliability.md §2.3), and repeat a mutation only with the journaled key or after a query showed it is
 * safe (pos-legacy §11).
 */
export interface PaymentCallDeps {
  payment: PaymentDriver;
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
}

export interface SettleOptions {
  /** Attempts before the settlement is left to recovery (default 5). */
  maxAttempts: number;
  /** First backoff delay, ms (default 500); doubles per attempt up to `maxDelayMs` (default 5000). */
  baseDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_SETTLE: SettleOptions = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 5000 };

export type StartResult =
  | { kind: "started"; ref: PaymentRef }
  | { kind: "failed"; reason: string; unresolved: boolean };

function backoff(attempt: number, o: SettleOptions): number {
  return Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
}

function describe(err: unknown): string {
  if (err instanceof PaymentError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Starts a payment. An ambiguous failure is resolved by `lookup(orderId)`: found → started; not found →
 * the start is repeated with the same idempotency key. Still unknown after the attempts → `unresolved`,
 * and the journal's pending intent leaves it to recovery.
 */
export async function startPaymentResolved(
  deps: PaymentCallDeps,
  req: StartRequest,
  options?: Partial<SettleOptions>,
): Promise<StartResult> {
  const o = { ...DEFAULT_SETTLE, ...options };
  let last = "no attempt made";
  for (let attempt = 0; attempt < o.maxAttempts; attempt++) {
    if (deps.signal.aborted) break;
    try {
      return { kind: "started", ref: await deps.payment.start(req, deps.signal) };
    } catch (err) {
      if (!(err instanceof PaymentError)) throw err;
      last = describe(err);
      if (!err.ambiguous) return { kind: "failed", reason: last, unresolved: false };
      deps.logger.warn({ orderId: req.orderId, err }, "payment start outcome unknown; querying");
    }
    try {
      const found = await deps.payment.lookup(req.orderId, deps.signal);
      if (found !== null) return { kind: "started", ref: found.ref };
    } catch (err) {
      if (!(err instanceof PaymentError)) throw err;
      last = describe(err);
    }
    try {
      await deps.clock.sleep(backoff(attempt, o), deps.signal);
    } catch {
      break;
    }
  }
  return { kind: "failed", reason: last, unresolved: true };
}

export interface SettleRequest {
  ref: PaymentRef;
  action: SettleAction;
  amount: Minor;
  /** The journaled intent; its idempotency key is used for a refund. */
  intent: Intent;
  refundOrderId: string;
}

/**

 * `retryable`: the service could not be asked (unreachable, no definite answer), so trying again later can
 * settle it; false when the service answered with a state that refuses the decision.
 * `conflict`: the service already did the opposite of the decision (captured what was to be cancelled, or
 * cancelled/expired what was to be captured). Repeating cannot help: the session needs a person.
 */
export type SettleResult =
  | { ok: true; detail: string }
  | { ok: false; detail: string; retryable: boolean; conflict?: true };

/** True when a payment in `state` contradicts a decision to `action` it (see `SettleResult`). */
export function conflictsWith(action: SettleAction, state: PaymentState): boolean {
  if (action === "capture") return state === "cancelled" || state === "expired" || state === "failed";
  return state === "captured";
}

/**
 * Captures or cancels (for a direct payment: nothing to capture, refund instead of cancel). Capture and
 * cancel are idempotent at the service, so an ambiguous attempt is repeated; a definitive refusal is
 * checked against the payment's status, because "already captured" or "already cancelled" is success.
 */
export async function settlePayment(
  deps: PaymentCallDeps,
  req: SettleRequest,
  options?: Partial<SettleOptions>,
): Promise<SettleResult> {
  const o = { ...DEFAULT_SETTLE, ...options };
  const { payment, signal } = deps;
  const { ref, action, amount } = req;
  let last = "no attempt made";
  for (let attempt = 0; attempt < o.maxAttempts; attempt++) {
    if (signal.aborted) break;
    try {
      if (ref.mode === "payment") return await settleDirect(deps, req);
      if (action === "capture") await payment.capture(ref, amount, signal);
      else await payment.cancel(ref, signal);
      return { ok: true, detail: `${action} ${amount}` };
    } catch (err) {
      if (!(err instanceof PaymentError)) throw err;
      last = describe(err);
      if (!err.ambiguous) return await confirmByStatus(deps, req, last);
      deps.logger.warn({ orderId: ref.orderId, action, err }, "settlement outcome unknown; repeating");
    }
    try {
      await deps.clock.sleep(backoff(attempt, o), signal);
    } catch {
      break;
    }
  }
  return { ok: false, detail: `left for recovery: ${last}`, retryable: true };
}

async function confirmByStatus(
  deps: PaymentCallDeps,
  req: SettleRequest,
  refusal: string,
): Promise<SettleResult> {
  try {
    const obs = await deps.payment.status(req.ref, deps.signal);
    if (req.action === "capture" && obs.state === "captured") return { ok: true, detail: "already captured" };
    if (req.action === "cancel" && (obs.state === "cancelled" || obs.state === "expired")) {
      return { ok: true, detail: `already ${obs.state}` };
    }
    if (conflictsWith(req.action, obs.state))
      return {
        ok: false,
        retryable: false,
        conflict: true,
        detail: `decided ${req.action}, but the service shows the payment ${obs.state} (${refusal})`,
      };
    return { ok: false, detail: `${refusal}; payment is ${obs.state}`, retryable: false };
  } catch (err) {
    return { ok: false, detail: `${refusal}; status unknown (${describe(err)})`, retryable: true };
  }
}

/** Older interface, direct payment mode: money moved at Done, so a failed vend is refunded (pos-legacy §12). */
async function settleDirect(deps: PaymentCallDeps, req: SettleRequest): Promise<SettleResult> {
  if (req.action === "capture") return { ok: true, detail: "direct payment: money moved at Done" };
  const obs = await deps.payment.status(req.ref, deps.signal);
  if (obs.state !== "paid") {
    await deps.payment.cancel(req.ref, deps.signal);
    return { ok: true, detail: "direct payment cancelled before Done" };
  }
  const r = await deps.payment.refund(
    {
      ref: req.ref,
      refundOrderId: req.refundOrderId,
      amount: req.amount,
      idempotencyKey: req.intent.idempotencyKey,
    },
    deps.signal,
  );
  return { ok: true, detail: `refunded (${r.refundId})` };
}
