import { VmcError } from "../../drivers/vmc/controller.js";
import { PLAN_DRIVER } from "../journal/journal.js";
import type { PaymentRef } from "../payment/driver.js";
import type { EffectIO, Request } from "./effectIO.js";
import { settle, startPayment } from "./moneyEffects.js";
import type { FinishedSession } from "./options.js";
import type { Effect, EngineInput, TimerName } from "./types.js";

/** The engine's own running activities, owned by the runner (timersAndPolls.ts). */
export type ActivityKey =
  | { kind: "timer"; sessionId: string; timer: TimerName }
  | { kind: "paymentWatch"; sessionId: string }
  | { kind: "checkinPoll" };
export type Activity =
  | { kind: "timer"; sessionId: string; timer: TimerName; ms: number }
  | { kind: "paymentWatch"; sessionId: string; ref: PaymentRef }
  | { kind: "checkinPoll" };

/**
 * The four things an effect may ask of the runner. Nothing else of it (state, timers, in-flight set) is in
 * an effect's reach: that keeps the commit-then-launch ordering in one place, the runner.
 */
export interface EffectHost {
  /** Performs `request` after the step commits (at once outside a step); its outcome is dispatched. */
  launch(request: Request): void;
  /** Arms a timer at once; a watch or poll is I/O and begins after the step commits. */
  start(activity: Activity): void;
  stop(activity: ActivityKey): void;
  /** Tells the engine's listeners a session finished. */
  finished(s: FinishedSession): void;
}

/**
 * True for an effect whose journal writes precede an outside effect that cannot be taken back, so its
 * step's commit must wait for the WAL fsync (src/journal/DURABILITY.md): the payment intent before the
 * payment request, the approval before the approval line reaches the VMC, the settlement decision and its
 * intent before the capture or cancel request. These are the effects that make the journal's `durable`
 * writes (recordIntent, approveVend, decide); every other step commits without waiting for fsync.
 */
export function needsDurableCommit(e: Effect): boolean {
  return e.type === "startPayment" || e.type === "approveVend" || e.type === "settle";
}

/**
 * Performs one effect. Journal writes run inline (inside the step's transaction); every request they
 * describe goes through `host.launch`, so it leaves only after the writes are durable.
 */
export function runEffect(effect: Effect, io: EffectIO, host: EffectHost): void {
  const { journal, display, logger, vmc, payment, faults } = io;
  switch (effect.type) {
    case "openSession":
      journal.openSession({
        ...effect.session,
        flow: io.flow,
        driver: effect.member === undefined ? payment.kind : PLAN_DRIVER,
        ...(effect.member === undefined ? {} : { member: effect.member }),
      });
      faults.hit("session.opened");
      logger.info(
        { session: effect.session.id, orderId: effect.session.orderId, price: effect.session.price },
        "session opened",
      );
      return;
    case "startPayment":
      host.launch(startPayment(io, effect));
      return;
    case "watchPayment":
      host.start({ kind: "paymentWatch", sessionId: effect.session.id, ref: effect.ref });
      return;
    case "stopWatching":
      host.stop({ kind: "paymentWatch", sessionId: effect.sessionId });
      return;
    case "approveVend":
      host.launch(approveVend(io, effect));
      return;
    case "denyVend":
      if (effect.refused) {
        // A price the unit never pays for: a misconfigured or misbehaving machine, or a spoofed line.
        const { item, price } = effect.refused;
        logger.warn({ session: effect.sessionId, item, price, reason: effect.reason }, "vend denied");
      } else {
        logger.info({ session: effect.sessionId, reason: effect.reason }, "vend denied");
      }
      host.launch(command("deny vend", () => vmc.denyVend()));
      return;
    case "allocateSession": {
      const orderId = journal.nextOrderId();
      // Answered as an input after this step (its own transaction opens the session).
      const input: EngineInput = { type: "sessionAllocated", sessionId: io.newId(), orderId };
      host.launch({ what: "allocate session", critical: true, run: async () => ({ input }) });
      return;
    }
    case "watchCheckin":
      host.start({ kind: "checkinPoll" });
      return;
    case "stopCheckin":
      host.stop({ kind: "checkinPoll" });
      return;
    case "beginSession": {
      const { funds } = effect;
      host.launch(command("begin session", () => vmc.beginSession(funds)));
      return;
    }
    case "endSession":
      host.launch(command("end session", () => vmc.endSession()));
      return;
    case "settle":
      host.launch(settle(io, effect));
      return;
    case "recordVend":
      journal.recordVend(effect.session.id, effect.outcome);
      faults.hit("vend.recorded");
      return;
    case "finishSession": {
      const { session, result, reason } = effect;
      journal.closeSession(session.id, result, reason);
      faults.hit("session.closed");
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
      host.start({ kind: "timer", sessionId: effect.sessionId, timer: effect.timer, ms: effect.ms });
      return;
    case "clearTimer":
      host.stop({ kind: "timer", sessionId: effect.sessionId, timer: effect.timer });
      return;
    case "ignored":
      logger.debug({ input: effect.input, state: effect.state, reason: effect.reason }, "input ignored");
      return;
  }
}

/** A VMC command whose failure is only logged; it leads to no input. */
function command(what: string, send: () => Promise<unknown>): Request {
  return {
    what,
    critical: false,
    run: async () => {
      await send();
      return undefined;
    },
  };
}

/** Journals "approved" durably (in the step), then asks the VMC to approve exactly the amount. */
function approveVend(io: EffectIO, effect: Extract<Effect, { type: "approveVend" }>): Request {
  const { journal, vmc, logger, faults } = io;
  const { session, item, amount } = effect;
  journal.approveVend(session.id, item, amount);
  faults.hit("approve.recorded");
  return {
    what: "approve vend",
    critical: true,
    run: async () => {
      try {
        await vmc.approveVend(amount);
      } catch (err) {
        if (err instanceof VmcError && err.code !== "timeout") {
          return { input: { type: "approveFailed", sessionId: session.id, reason: err.message } };
        }
        // No confirmation does not mean "not approved": the vend timer and the outcome decide.
        logger.warn({ err, session: session.id }, "approval not confirmed by the VMC");
        return undefined;
      }
      faults.hit("approve.sent");
      return undefined;
    },
  };
}
