import { CONFLICT_PREFIX } from "../journal/journal.js";
import type { EffectIO, Outcome, Request } from "./effectIO.js";
import { settlePayment, startPaymentResolved } from "./payments.js";
import type { Effect } from "./types.js";

/*
 * The two effects that move money. Each journals its intent (with the idempotency key) in the step, and
 * returns the request the runner sends after that commit; the answer is journaled together with the input
 * it becomes, in one transaction (payments.ts sends each mutation once and resolves an unknown outcome).
 */

/** Journals the start intent; the request starts the payment and answers paymentStarted / StartFailed. */
export function startPayment(io: EffectIO, effect: Extract<Effect, { type: "startPayment" }>): Request {
  const { journal, logger, payment, faults, signal } = io;
  const { session, purpose } = effect;
  const intent = journal.recordIntent({
    sessionId: session.id,
    op: "start",
    orderId: session.orderId,
    paymentId: null,
    amount: session.price,
  });
  faults.hit("start.recorded");
  const request = {
    orderId: session.orderId,
    amount: session.price,
    idempotencyKey: intent.idempotencyKey,
    mode: purpose === "session" ? ("reservation" as const) : io.paymentMode,
    // A check-in session captures what was vended: the older interface needs CaptureType Partial.
    captureType: purpose === "session" ? ("partial" as const) : io.captureType,
  };
  return {
    what: "start payment",
    critical: true,
    run: async (): Promise<Outcome> => {
      const r = await startPaymentResolved({ payment, logger, signal }, request);
      if (r.kind === "started") {
        return {
          record: () => {
            faults.hit("start.sent");
            journal.setPaymentId(session.id, r.ref.id);
            journal.completeIntent(intent.id, "done", "started");
            faults.hit("start.completed");
          },
          // Committed without fsync (DURABILITY.md): a power cut here loses it; recovery finds the payment
          // by its order id.
          committed: () => faults.hit("start.answered"),
          input: { type: "paymentStarted", sessionId: session.id, ref: r.ref },
        };
      }
      return {
        record: () => {
          if (!r.unresolved) journal.completeIntent(intent.id, "failed", r.reason);
        },
        input: {
          type: "paymentStartFailed",
          sessionId: session.id,
          reason: r.reason,
          unresolved: r.unresolved,
        },
      };
    },
  };
}

/** Journals the decision and the intent; the request captures, cancels or refunds and answers settled / settleFailed. */
export function settle(io: EffectIO, effect: Extract<Effect, { type: "settle" }>): Request {
  const { journal, logger, payment, faults, signal } = io;
  const { session, ref, action, amount, reason, review } = effect;
  journal.decide(session.id, { action, amount, reason, review });
  const intent = journal.recordIntent({
    sessionId: session.id,
    op: action === "cancel" && ref.mode === "payment" ? "refund" : action,
    orderId: session.orderId,
    paymentId: ref.id,
    amount,
  });
  faults.hit("settle.recorded");
  const request = { ref, action, amount, intent, refundOrderId: `${session.orderId}r` };
  return {
    what: "settle payment",
    critical: true,
    run: async (): Promise<Outcome> => {
      const r = await settlePayment({ payment, logger, signal }, request);
      if (r.ok) {
        return {
          record: () => {
            faults.hit("settle.sent");
            journal.completeIntent(intent.id, "done", r.detail);
            faults.hit("settle.completed");
          },
          // Committed without fsync with the session's close: a power cut here loses both; recovery asks
          // the service and applies the journaled decision exactly once.
          committed: () => faults.hit("settle.answered"),
          input: { type: "settled", sessionId: session.id },
        };
      }
      if (r.conflict) {
        return {
          record: () => {
            // Someone else settled this payment the other way (reliability: one journal, one writer).
            journal.completeIntent(intent.id, "failed", r.detail);
            journal.flag(session.id, r.detail);
            logger.error(
              { session: session.id, orderId: session.orderId, action, detail: r.detail },
              "settlement conflicts with the payment service; flagged for review",
            );
          },
          input: { type: "settleFailed", sessionId: session.id, reason: `${CONFLICT_PREFIX}${r.detail}` },
        };
      }
      // Nothing to record, but committed like the other answers (the step's effects join its transaction).
      return { record: () => {}, input: { type: "settleFailed", sessionId: session.id, reason: r.detail } };
    },
  };
}
