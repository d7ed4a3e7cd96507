import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { type CheckinDisplay, checkinUri } from "../../drivers/display/display.js";
import type { VendController, VmcEvent } from "../../drivers/vmc/controller.js";
import { VmcError } from "../../drivers/vmc/controller.js";
import type { Clock, Timer } from "../core/clock.js";
import type { Journal } from "../journal/journal.js";
import type { PaymentDriver, PaymentRef, PosIdentity } from "../payment/driver.js";
import { watchPayment } from "../payment/watch.js";
import { IDLE, rest, transition } from "./machine.js";
import { type SettleOptions, settlePayment, startPaymentResolved } from "./payments.js";
import type { Effect, EngineContext, EngineInput, EngineState, SessionResult } from "./types.js";

export interface EngineOptions {
  /** Selection first (default) or check-in first. */
  flow?: EngineContext["flow"];
  /** Check-in first: `poll` the check-in query, or keep an `idlePayment` initiated. */
  checkinMode?: EngineContext["checkinMode"];
  /** Check-in first: the amount reserved per session, minor units. */
  sessionMax?: number;
  currency: string;
  /** QR scheme of the check-in URI (pos-v10 §15). */
  scheme: string;
  paymentTimeoutMs: number;
  vendTimeoutMs: number;
  unknownOutcome: EngineContext["unknownOutcome"];
  /** How payments are started: reservations (default) or the older interface's direct payments. */
  paymentMode: "reservation" | "payment";
  captureType: "full" | "partial";
  settle?: Partial<SettleOptions>;
}

export interface EngineDeps {
  payment: PaymentDriver;
  vmc: VendController;
  display: CheckinDisplay;
  journal: Journal;
  clock: Clock;
  logger: Logger;
}

export interface FinishedSession {
  sessionId: string;
  orderId: string;
  price: number;
  result: SessionResult;
  reason: string;
}

/**
 * Runs the pure machine: performs each effect in order and feeds results, VMC events and timer expiries
 * back as inputs, one at a time. Journal writes happen synchronously inside the effect that needs them,
 * before the request they describe is started, so a failed write means nothing is sent.
 */
export class VendEngine {
  private state: EngineState = IDLE;
  private ctx: EngineContext | null = null;
  private readonly queue: EngineInput[] = [];
  private draining = false;
  private readonly timers = new Map<string, Timer>();
  private readonly watches = new Map<string, AbortController>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly observers = new Set<Promise<unknown>>();
  private readonly finishedListeners = new Set<(s: FinishedSession) => void>();
  private unsubscribeVmc: (() => void) | null = null;
  private checkinWatch: AbortController | null = null;
  private readonly stopController = new AbortController();
  private failed: Error | null = null;
  private identity: PosIdentity | null = null;

  constructor(
    private readonly deps: EngineDeps,
    private readonly opts: EngineOptions,
  ) {}

  /** The current state (for the console and tests). */
  get current(): EngineState {
    return this.state;
  }

  get pos(): PosIdentity | null {
    return this.identity;
  }

  /** Brings the PoS into service at the payment service, then enables the VMC. */
  async start(): Promise<void> {
    const { payment, vmc, display, logger } = this.deps;
    display.show({ kind: "outOfService", reason: "Starting" });
    this.identity = await payment.open(this.stopController.signal);
    this.ctx = {
      flow: this.opts.flow ?? "selection",
      checkinMode: this.opts.checkinMode ?? "poll",
      sessionMax: this.opts.sessionMax ?? 2000,
      currency: this.opts.currency,
      checkinUri: checkinUri(this.opts.scheme, this.identity.beaconId),
      paymentTimeoutMs: this.opts.paymentTimeoutMs,
      vendTimeoutMs: this.opts.vendTimeoutMs,
      unknownOutcome: this.opts.unknownOutcome,
    };
    this.unsubscribeVmc = vmc.onEvent((e) => this.onVmcEvent(e));
    await vmc.open();
    logger.info({ posId: this.identity.posId, beaconId: this.identity.beaconId }, "unit in service");
    const start = rest(this.ctx);
    this.state = start.state;
    this.runEffects(start.effects);
  }

  /** Stops timers and polls, waits for in-flight settlements, closes nothing it does not own. */
  async stop(): Promise<void> {
    this.stopController.abort(new Error("engine stopped"));
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    for (const w of this.watches.values()) w.abort(new Error("engine stopped"));
    this.checkinWatch?.abort(new Error("engine stopped"));
    this.watches.clear();
    this.unsubscribeVmc?.();
    await this.settledInflight();
    await Promise.allSettled([...this.observers]);
  }

  onSessionFinished(listener: (s: FinishedSession) => void): () => void {
    this.finishedListeners.add(listener);
    return () => this.finishedListeners.delete(listener);
  }

  /** Resolves when the machine is idle with nothing in flight. */
  async whenIdle(): Promise<void> {
    for (;;) {
      await this.settledInflight();
      const resting = this.state.tag === "idle" || (this.state.tag === "ready" && !this.state.allocating);
      if (resting && this.inflight.size === 0 && this.queue.length === 0) return;
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  private async settledInflight(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Feeds one input to the machine (queued: inputs are processed strictly one at a time). */
  dispatch(input: EngineInput): void {
    this.queue.push(input);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        this.step(next);
      }
    } finally {
      this.draining = false;
    }
  }

  private step(input: EngineInput): void {
    const ctx = this.ctx;
    if (ctx === null) {
      this.deps.logger.warn({ input: input.type }, "input before the engine started; ignored");
      return;
    }
    const { state, effects } = transition(this.state, input, ctx);
    this.state = state;
    this.runEffects(effects);
  }

  private runEffects(effects: readonly Effect[]): void {
    for (const effect of effects) {
      try {
        this.run(effect);
      } catch (err) {
        this.fail(err, effect);
        return;
      }
    }
  }

  private onVmcEvent(e: VmcEvent): void {
    if (this.failed !== null) {
      if (e.type === "vendRequested") this.background(this.deps.vmc.denyVend(), "deny while out of service");
      return;
    }
    switch (e.type) {
      case "vendRequested": {
        let orderId: string;
        try {
          orderId = this.deps.journal.nextOrderId();
        } catch (err) {
          this.fail(err, null);
          this.background(this.deps.vmc.denyVend(), "deny after journal failure");
          return;
        }
        this.dispatch({
          type: "vendRequested",
          item: e.item,
          price: e.price,
          sessionId: randomUUID(),
          orderId,
        });
        return;
      }
      case "vendSucceeded":
        this.dispatch({ type: "vendSucceeded", item: e.item });
        return;
      case "vendFailed":
        this.dispatch({ type: "vendFailed" });
        return;
      case "vendCancelled":
        this.dispatch({ type: "vendCancelled" });
        return;
      case "reset":
        this.dispatch({ type: "vmcReset", reason: e.reason });
        return;
      case "sessionEnded":
        this.dispatch({ type: "sessionEnded" });
        return;
      case "sessionStarted":
      case "link":
        this.deps.logger.info({ vmc: e }, "vmc event");
        return;
    }
  }

  private run(effect: Effect): void {
    const { journal, display, logger, vmc, clock } = this.deps;
    switch (effect.type) {
      case "openSession":
        journal.openSession({
          ...effect.session,
          flow: this.ctx?.flow ?? "selection",
          driver: this.deps.payment.kind,
        });
        logger.info(
          { session: effect.session.id, orderId: effect.session.orderId, price: effect.session.price },
          "vend requested",
        );
        return;
      case "startPayment": {
        const { session } = effect;
        const intent = journal.recordIntent({
          sessionId: session.id,
          op: "start",
          orderId: session.orderId,
          paymentId: null,
          amount: session.price,
        });
        this.track(
          startPaymentResolved(
            {
              payment: this.deps.payment,
              clock,
              logger,
              signal: this.stopController.signal,
            },
            {
              orderId: session.orderId,
              amount: session.price,
              idempotencyKey: intent.idempotencyKey,
              mode: effect.purpose === "session" ? "reservation" : this.opts.paymentMode,
              // A check-in session captures what was vended: the older interface needs CaptureType Partial.
              captureType: effect.purpose === "session" ? "partial" : this.opts.captureType,
            },
          ).then((r) => {
            if (r.kind === "started") {
              journal.setPaymentId(session.id, r.ref.id);
              journal.completeIntent(intent.id, "done", `payment ${r.ref.id}`);
              this.dispatch({ type: "paymentStarted", sessionId: session.id, ref: r.ref });
            } else {
              if (!r.unresolved) journal.completeIntent(intent.id, "failed", r.reason);
              this.dispatch({
                type: "paymentStartFailed",
                sessionId: session.id,
                reason: r.reason,
                unresolved: r.unresolved,
              });
            }
          }),
        );
        return;
      }
      case "watchPayment":
        this.watch(effect.session.id, effect.ref);
        return;
      case "stopWatching":
        this.watches.get(effect.sessionId)?.abort(new Error("stopped watching"));
        this.watches.delete(effect.sessionId);
        return;
      case "approveVend": {
        const { session, amount } = effect;
        journal.approveVend(session.id, effect.item, amount);
        this.track(
          vmc.approveVend(amount).catch((err: unknown) => {
            if (err instanceof VmcError && err.code !== "timeout") {
              this.dispatch({ type: "approveFailed", sessionId: session.id, reason: err.message });
            } else {
              // No confirmation does not mean "not approved": the vend timer and the outcome decide.
              logger.warn({ err, session: session.id }, "approval not confirmed by the VMC");
            }
          }),
        );
        return;
      }
      case "allocateSession": {
        const orderId = journal.nextOrderId();
        // Answered as an input, after the current step's effects.
        queueMicrotask(() => this.dispatch({ type: "sessionAllocated", sessionId: randomUUID(), orderId }));
        return;
      }
      case "watchCheckin":
        this.watchCheckin();
        return;
      case "stopCheckin":
        this.checkinWatch?.abort(new Error("stopped"));
        this.checkinWatch = null;
        return;
      case "beginSession":
        this.background(vmc.beginSession(effect.funds), "begin session");
        return;
      case "endSession":
        this.background(vmc.endSession(), "end session");
        return;
      case "denyVend":
        logger.info({ session: effect.sessionId, reason: effect.reason }, "vend denied");
        this.background(vmc.denyVend(), "deny vend");
        return;
      case "settle": {
        const { session, ref, action, amount, reason, review } = effect;
        journal.decide(session.id, { action, amount, reason, review });
        const intent = journal.recordIntent({
          sessionId: session.id,
          op: action === "cancel" && ref.mode === "payment" ? "refund" : action,
          orderId: session.orderId,
          paymentId: ref.id,
          amount,
        });
        this.track(
          settlePayment(
            { payment: this.deps.payment, clock, logger, signal: this.stopController.signal },
            { ref, action, amount, intent, refundOrderId: `${session.orderId}r` },
            this.opts.settle,
          ).then((r) => {
            if (r.ok) {
              journal.completeIntent(intent.id, "done", r.detail);
              this.dispatch({ type: "settled", sessionId: session.id });
            } else {
              this.dispatch({ type: "settleFailed", sessionId: session.id, reason: r.detail });
            }
          }),
        );
        return;
      }
      case "recordVend":
        journal.recordVend(effect.session.id, effect.outcome);
        return;
      case "finishSession": {
        const { session, result, reason } = effect;
        journal.closeSession(session.id, result, reason);
        logger.info({ session: session.id, orderId: session.orderId, result, reason }, "session finished");
        const finished: FinishedSession = {
          sessionId: session.id,
          orderId: session.orderId,
          price: session.price,
          result,
          reason,
        };
        for (const l of this.finishedListeners) l(finished);
        return;
      }
      case "show":
        display.show(effect.screen);
        return;
      case "startTimer": {
        const key = `${effect.sessionId}:${effect.timer}`;
        this.timers.get(key)?.cancel();
        const { sessionId, timer } = effect;
        this.timers.set(
          key,
          clock.setTimer(effect.ms, () => {
            this.timers.delete(key);
            this.dispatch({ type: "timeout", sessionId, timer });
          }),
        );
        return;
      }
      case "clearTimer": {
        const key = `${effect.sessionId}:${effect.timer}`;
        this.timers.get(key)?.cancel();
        this.timers.delete(key);
        return;
      }
      case "ignored":
        logger.debug({ input: effect.input, state: effect.state, reason: effect.reason }, "input ignored");
        return;
    }
  }

  private watch(sessionId: string, ref: PaymentRef): void {
    const ac = new AbortController();
    this.watches.get(sessionId)?.abort(new Error("replaced"));
    this.watches.set(sessionId, ac);
    const { payment, clock, logger } = this.deps;
    this.track(
      (async () => {
        try {
          const polls = watchPayment(payment, ref, {
            clock,
            signal: ac.signal,
            until: (obs) => obs.state !== "pending" && obs.state !== "issued",
          });
          for await (const observation of polls) {
            this.dispatch({ type: "paymentUpdate", sessionId, observation });
          }
        } catch (err) {
          // The payment timer still runs: a watch that gives up ends in a cancel, never in a vend.
          if (!ac.signal.aborted) logger.warn({ err, session: sessionId }, "payment watch ended");
        }
      })(),
    );
  }

  /** Check-in first, `poll` mode: polls the check-in query at the service's pace until a check-in. */
  private watchCheckin(): void {
    this.checkinWatch?.abort(new Error("replaced"));
    const ac = new AbortController();
    this.checkinWatch = ac;
    const { payment, clock, logger } = this.deps;
    this.observe(
      (async () => {
        let delay = 0;
        while (!ac.signal.aborted) {
          try {
            if (delay > 0) await clock.sleep(delay, ac.signal);
            const obs = await payment.checkin(ac.signal);
            delay = Math.max(obs.pollDelayMs, 1000);
            if (obs.checkedIn && !ac.signal.aborted) {
              this.dispatch({ type: "checkedIn" });
              return;
            }
          } catch (err) {
            if (ac.signal.aborted) return;
            delay = Math.max(delay, 1000);
            logger.warn({ err }, "check-in poll failed");
          }
        }
      })(),
    );
  }

  /** Long-lived observations (the check-in poll): awaited by stop(), not by whenIdle(). */
  private observe(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => this.fail(err, null));
    this.observers.add(tracked);
    void tracked.finally(() => this.observers.delete(tracked));
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => this.fail(err, null));
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }

  private background(p: Promise<unknown>, what: string): void {
    this.track(
      p.catch((err: unknown) => {
        this.deps.logger.warn({ err }, `${what} failed`);
      }),
    );
  }

  /** A journal failure (or a bug) takes the unit out of service: nothing more is approved or sent. */
  private fail(err: unknown, effect: Effect | null): void {
    const error = err instanceof Error ? err : new Error(String(err));
    if (this.failed === null) this.failed = error;
    this.deps.logger.fatal({ err: error, effect: effect?.type }, "engine out of service");
    this.deps.display.show({ kind: "outOfService", reason: "Service required" });
    this.background(this.deps.vmc.setEnabled(false), "disable VMC");
  }

  /** The error that took the unit out of service, if any. */
  get failure(): Error | null {
    return this.failed;
  }
}
