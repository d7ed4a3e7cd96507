import { VmcError } from "../../drivers/vmc/controller.js";
import type { FaultPoints } from "../core/faults.js";
import { CONFLICT_PREFIX } from "../journal/journal.js";
import type { PaymentRef } from "../payment/driver.js";
import type { EngineDeps, EngineOptions, FinishedSession } from "./options.js";
import { settlePayment, startPaymentResolved } from "./payments.js";
import type { Effect, EngineContext, EngineInput, TimerName } from "./types.js";

/** What an effect may use of the engine that runs it (runner.ts). */
export interface EffectHost {
  readonly deps: EngineDeps;
  readonly opts: EngineOptions;
  readonly ctx: EngineContext;
  readonly faults: FaultPoints;
  readonly signal: AbortSignal;
  dispatch(input: EngineInput): void;
  /** Runs `fn` in the step's transaction (joining one already open); queued I/O launches after commit. */
  atomic(fn: () => void): void;
  /** Queues I/O until the current step's journal writes have committed. */
  launch(io: () => void): void;
  /** A mutation in flight (awaited by whenIdle and stop). */
  track(p: Promise<unknown>): void;
  /** A command whose failure is only logged. */
  background(p: Promise<unknown>, what: string): void;
  watchPayment(sessionId: string, ref: PaymentRef): void;
  stopWatching(sessionId: string): void;
  watchCheckin(): void;
  stopCheckin(): void;
  startTimer(sessionId: string, timer: TimerName, ms: number): void;
  clearTimer(sessionId: string, timer: TimerName): void;
  finished(s: FinishedSession): void;
}

/**
 * Performs one effect. Journal writes run inline (inside the step's transaction); every request they
 * describe is started through `host.launch`, so it leaves only after the writes are durable.
 */
export function runEffect(host: EffectHost, effect: Effect): void {
  const { journal, display, logger, vmc, payment } = host.deps;
  switch (effect.type) {
    case "openSession":
      journal.openSession({ ...effect.session, flow: host.ctx.flow, driver: payment.kind });
      journal.event(effect.session.id, "opened", {
        flow: host.ctx.flow,
        item: effect.session.item,
        price: effect.session.price,
      });
      host.faults.hit("session.opened");
      logger.info(
        { session: effect.session.id, orderId: effect.session.orderId, price: effect.session.price },
        "session opened",
      );
      return;
    case "startPayment":
      startPayment(host, effect);
      return;
    case "watchPayment": {
      const { session, ref } = effect;
      host.launch(() => host.watchPayment(session.id, ref));
      return;
    }
    case "stopWatching":
      host.stopWatching(effect.sessionId);
      return;
    case "approveVend": {
      const { session, item, amount } = effect;
      journal.approveVend(session.id, item, amount);
      journal.event(session.id, "approved", { item, amount });
      host.faults.hit("approve.recorded");
      host.launch(() =>
        host.track(
          vmc.approveVend(amount).then(
            () => host.faults.hit("approve.sent"),
            (err: unknown) => {
              if (err instanceof VmcError && err.code !== "timeout") {
                host.dispatch({ type: "approveFailed", sessionId: session.id, reason: err.message });
              } else {
                // No confirmation does not mean "not approved": the vend timer and the outcome decide.
                logger.warn({ err, session: session.id }, "approval not confirmed by the VMC");
              }
            },
          ),
        ),
      );
      return;
    }
    case "denyVend":
      if (effect.refused) {
        // A price the unit never pays for: a misconfigured or misbehaving machine, or a spoofed line.
        const { item, price } = effect.refused;
        logger.warn({ session: effect.sessionId, item, price, reason: effect.reason }, "vend denied");
      } else {
        logger.info({ session: effect.sessionId, reason: effect.reason }, "vend denied");
      }
      host.launch(() => host.background(vmc.denyVend(), "deny vend"));
      return;
    case "allocateSession": {
      const orderId = journal.nextOrderId();
      // Answered as an input after this step (its own transaction opens the session).
      queueMicrotask(() =>
        host.dispatch({ type: "sessionAllocated", sessionId: host.deps.newId(), orderId }),
      );
      return;
    }
    case "watchCheckin":
      host.launch(() => host.watchCheckin());
      return;
    case "stopCheckin":
      host.stopCheckin();
      return;
    case "beginSession": {
      const { funds } = effect;
      host.launch(() => host.background(vmc.beginSession(funds), "begin session"));
      return;
    }
    case "endSession":
      host.launch(() => host.background(vmc.endSession(), "end session"));
      return;
    case "settle":
      settle(host, effect);
      return;
    case "recordVend":
      journal.recordVend(effect.session.id, effect.outcome);
      journal.event(effect.session.id, "vend", { outcome: effect.outcome });
      host.faults.hit("vend.recorded");
      return;
    case "finishSession": {
      const { session, result, reason } = effect;
      journal.closeSession(session.id, result, reason);
      journal.event(session.id, "closed", { result, reason });
      host.faults.hit("session.closed");
      logger.info({ session: session.id, orderId: session.orderId, result, reason }, "session finished");
      host.finished({
        sessionId: session.id,
        orderId: session.orderId,
        price: session.price,
        result,
        reason,
      });
      return;
    }
    case "show":
      display.show(effect.screen);
      return;
    case "startTimer":
      host.startTimer(effect.sessionId, effect.timer, effect.ms);
      return;
    case "clearTimer":
      host.clearTimer(effect.sessionId, effect.timer);
      return;
    case "ignored":
      logger.debug({ input: effect.input, state: effect.state, reason: effect.reason }, "input ignored");
      return;
  }
}

function startPayment(host: EffectHost, effect: Extract<Effect, { type: "startPayment" }>): void {
  const { journal, logger, payment } = host.deps;
  const { session, purpose } = effect;
  const intent = journal.recordIntent({
    sessionId: session.id,
    op: "start",
    orderId: session.orderId,
    paymentId: null,
    amount: session.price,
  });
  host.faults.hit("start.recorded");
  const request = {
    orderId: session.orderId,
    amount: session.price,
    idempotencyKey: intent.idempotencyKey,
    mode: purpose === "session" ? ("reservation" as const) : host.opts.paymentMode,
    // A check-in session captures what was vended: the older interface needs CaptureType Partial.
    captureType: purpose === "session" ? ("partial" as const) : host.opts.captureType,
  };
  host.launch(() =>
    host.track(
      startPaymentResolved({ payment, logger, signal: host.signal }, request).then((r) =>
        host.atomic(() => {
          if (r.kind === "started") {
            host.faults.hit("start.sent");
            journal.setPaymentId(session.id, r.ref.id);
            journal.event(session.id, "payment", { paymentId: r.ref.id });
            journal.completeIntent(intent.id, "done", `payment ${r.ref.id}`);
            host.faults.hit("start.completed");
            host.dispatch({ type: "paymentStarted", sessionId: session.id, ref: r.ref });
          } else {
            if (!r.unresolved) journal.completeIntent(intent.id, "failed", r.reason);
            host.dispatch({
              type: "paymentStartFailed",
              sessionId: session.id,
              reason: r.reason,
              unresolved: r.unresolved,
            });
          }
        }),
      ),
    ),
  );
}

function settle(host: EffectHost, effect: Extract<Effect, { type: "settle" }>): void {
  const { journal, logger, payment } = host.deps;
  const { session, ref, action, amount, reason, review } = effect;
  journal.decide(session.id, { action, amount, reason, review });
  journal.event(session.id, "decided", { action, amount, reason, review });
  const intent = journal.recordIntent({
    sessionId: session.id,
    op: action === "cancel" && ref.mode === "payment" ? "refund" : action,
    orderId: session.orderId,
    paymentId: ref.id,
    amount,
  });
  host.faults.hit("settle.recorded");
  const request = { ref, action, amount, intent, refundOrderId: `${session.orderId}r` };
  host.launch(() =>
    host.track(
      settlePayment({ payment, logger, signal: host.signal }, request).then((r) =>
        host.atomic(() => {
          if (r.ok) {
            host.faults.hit("settle.sent");
            journal.completeIntent(intent.id, "done", r.detail);
            host.faults.hit("settle.completed");
            host.dispatch({ type: "settled", sessionId: session.id });
          } else if (r.conflict) {
            // Someone else settled this payment the other way (reliability: one journal, one writer).
            journal.completeIntent(intent.id, "failed", r.detail);
            journal.flag(session.id, r.detail);
            logger.error(
              { session: session.id, orderId: session.orderId, action, detail: r.detail },
              "settlement conflicts with the payment service; flagged for review",
            );
            host.dispatch({
              type: "settleFailed",
              sessionId: session.id,
              reason: `${CONFLICT_PREFIX}${r.detail}`,
            });
          } else {
            host.dispatch({ type: "settleFailed", sessionId: session.id, reason: r.detail });
          }
        }),
      ),
    ),
  );
}
