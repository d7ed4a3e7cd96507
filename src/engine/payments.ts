import type { Logger } from "pino";
import type { Minor } from "../core/money.js";
import type { Intent } from "../journal/journal.js";
import type { PaymentDriver, PaymentRef, PaymentState, StartRequest } from "../payment/driver.js";
import { PaymentError } from "../payment/errors.js";
import type { SettleAction } from "./types.js";

/**
 * The engine's use of a payment driver for the two mutations that matter: starting a payment and settling
 * it. The engine sends each mutation ONCE: the driver and its transport already repeat what is safe to
 * repeat (retry.ts decides, budget.ts counts), so a loop here would multiply their attempts. An ambiguous
 * outcome (timeout, reset, 5xx) is resolved by ONE query to the service, never by guessing and never by
 * sending again (reliability.md §2.3); what is still unknown is left to recovery, whose sweeper settles it
 * later with the same budget.
 */
export interface PaymentCallDeps {
  payment: PaymentDriver;
  logger: Logger;
  signal: AbortSignal;
}

export type StartResult =
  | { kind: "started"; ref: PaymentRef }
  | { kind: "failed"; reason: string; unresolved: boolean };

function describe(err: unknown): string {
  if (err instanceof PaymentError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Starts a payment. An ambiguous failure is resolved by `lookup(orderId)`: found → started. Not found, or
 * the lookup failed → `unresolved`: the journal's pending intent leaves it to recovery, which looks the
 * order up again later (a start the service applies late is then found and released, never lost).
 */
export async function startPaymentResolved(deps: PaymentCallDeps, req: StartRequest): Promise<StartResult> {
  if (deps.signal.aborted) return { kind: "failed", reason: "no attempt made", unresolved: true };
  let last: string;
  try {
    return { kind: "started", ref: await deps.payment.start(req, deps.signal) };
  } catch (err) {
    if (!(err instanceof PaymentError)) throw err;
    last = describe(err);
    if (!err.ambiguous) return { kind: "failed", reason: last, unresolved: false };
    deps.logger.warn({ orderId: req.orderId, err }, "payment start outcome unknown; looking it up");
  }
  try {
    const found = await deps.payment.lookup(req.orderId, deps.signal);
    if (found !== null) return { kind: "started", ref: found.ref };
    last = `${last}; the order is not at the service (yet)`;
  } catch (err) {
    if (!(err instanceof PaymentError)) throw err;
    last = `${last}; lookup failed: ${describe(err)}`;
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
 * Captures or cancels (for a direct payment: nothing to capture, refund instead of cancel), once. Any
 * failure is checked against the payment's status, because "already captured" or "already cancelled" is
 * success; otherwise the settlement is left for recovery with its decision journaled.
 */
export async function settlePayment(deps: PaymentCallDeps, req: SettleRequest): Promise<SettleResult> {
  const { payment, signal } = deps;
  const { ref, action, amount } = req;
  if (signal.aborted) return { ok: false, detail: "left for recovery: no attempt made", retryable: true };
  try {
    if (ref.mode === "payment") return await settleDirect(deps, req);
    if (action === "capture") await payment.capture(ref, amount, signal);
    else await payment.cancel(ref, signal);
    return { ok: true, detail: `${action} ${amount}` };
  } catch (err) {
    if (!(err instanceof PaymentError)) throw err;
    if (err.ambiguous) {
      deps.logger.warn({ orderId: ref.orderId, action, err }, "settlement outcome unknown; querying status");
    }
    return confirmByStatus(deps, req, describe(err), err.ambiguous);
  }
}

async function confirmByStatus(
  deps: PaymentCallDeps,
  req: SettleRequest,
  failure: string,
  ambiguous: boolean,
): Promise<SettleResult> {
  const why = ambiguous ? `left for recovery: ${failure}` : failure;
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
        detail: `decided ${req.action}, but the service shows the payment ${obs.state} (${failure})`,
      };
    // After an ambiguous failure the call may simply not have been applied: recovery tries again. A
    // definite refusal with the payment still open is for a person.
    return { ok: false, detail: `${why}; payment is ${obs.state}`, retryable: ambiguous };
  } catch (err) {
    return { ok: false, detail: `${why}; status unknown (${describe(err)})`, retryable: true };
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
