import type { VmcEvent } from "../../drivers/vmc/controller.js";
import type { PosIdentity } from "../payment/driver.js";
import { CommitThenLaunch } from "./commit.js";
import { type EffectIO, effectIO, type Outcome, type Request } from "./effectIO.js";
import { type EffectHost, needsDurableCommit, runEffect } from "./effects.js";
import { transition } from "./machine.js";
import { type EngineDeps, type EngineOptions, engineContext, type FinishedSession } from "./options.js";
import { IDLE, opensSessions, rest } from "./steps.js";
import { Activities } from "./timersAndPolls.js";
import type { Effect, EngineContext, EngineInput, EngineState } from "./types.js";
import { onVmcEvent, type VmcEventHost } from "./vmcEvents.js";

/**
 * Runs the pure machine (machine.ts). Inputs (VMC events, payment results, timer expiries) are processed
 * strictly one at a time; each step's journal writes commit in one transaction, and the I/O the step starts
 * is launched only after that commit, so nothing is ever sent that the journal does not hold durably.
 */
export class VendEngine implements VmcEventHost {
  private state: EngineState = IDLE;
  private context: EngineContext | null = null;
  /** Inputs waiting to be processed, each with the journal writes of the answer it comes from. */
  private readonly queue: { input: EngineInput; answer: Answer | undefined }[] = [];
  private draining = false;
  private readonly tx: CommitThenLaunch;
  private io: EffectIO | null = null;
  /** All an effect may ask of the engine (effects.ts). */
  private readonly host: EffectHost = {
    launch: (request) => this.launch(request),
    // Timers arm at once; a watch or poll is I/O, so it begins only after the step commits.
    start: (a) =>
      a.kind === "timer" ? this.activities.start(a) : this.tx.afterCommit(() => this.activities.start(a)),
    stop: (activity) => this.activities.stop(activity),
    finished: (s) => {
      for (const l of this.finishedListeners) l(s);
    },
  };
  private readonly activities: Activities;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly observers = new Set<Promise<unknown>>();
  private readonly finishedListeners = new Set<(s: FinishedSession) => void>();
  private readonly failureListeners = new Set<(err: Error) => void>();
  private unsubscribeVmc: (() => void) | null = null;
  private readonly stopController = new AbortController();
  private failed: Error | null = null;
  private serviceReason: string | null = null;
  private identity: PosIdentity | null = null;
  /** VMC events held behind a vend request that waits for a badge tap (vmcEvents.ts). */
  held: VmcEvent[] | null = null;

  constructor(
    readonly deps: EngineDeps,
    private readonly opts: EngineOptions,
  ) {
    this.activities = new Activities(deps, {
      dispatch: (input) => this.dispatch(input),
      track: (p) => this.track(p),
      observe: (p) => {
        const observed = p.catch((err: unknown) => this.fail(err));
        this.observers.add(observed);
        void observed.finally(() => this.observers.delete(observed));
      },
    });
    this.tx = new CommitThenLaunch(deps.journal, (err) => this.fail(err));
  }

  /** The current state (for the console and tests). */
  get current(): EngineState {
    return this.state;
  }

  get pos(): PosIdentity | null {
    return this.identity;
  }

  /** The error that took the unit out of service, if any. */
  get failure(): Error | null {
    return this.failed;
  }

  /** Why the unit is out of service by request (service mode, door open), or null. */
  get outOfService(): string | null {
    return this.serviceReason;
  }

  /**
   * Takes the unit out of service (`reason`) or back in (`null`): between sessions only, so a running sale
   * finishes first. Out of service, the VMC is disabled and the screen says why.
   */
  async setOutOfService(reason: string | null): Promise<void> {
    this.serviceReason = reason;
    if (reason !== null) this.releaseIdlePayment();
    await this.whenIdle();
    if (this.serviceReason !== reason || this.failed !== null) return;
    const { vmc, display } = this.deps;
    if (reason !== null) {
      this.activities.stopCheckin();
      await vmc.setEnabled(false);
      display.show({ kind: "outOfService", reason });
      this.deps.logger.warn({ reason }, "out of service");
      return;
    }
    await vmc.setEnabled(true);
    this.deps.logger.info("back in service");
    if (this.context === null) return;
    const back = rest(this.context);
    this.state = back.state;
    this.runEffects(back.effects);
  }

  /**
   * Brings the PoS into service at the payment service (unless the caller already opened the driver and
   * passes its identity), then enables the VMC.
   */
  async start(opened?: PosIdentity): Promise<void> {
    this.deps.display.show({ kind: "outOfService", reason: "Starting" });
    const identity = opened ?? (await this.deps.payment.open(this.stopController.signal));
    await this.begin(identity);
  }

  /**
   * Members only (issue 31, selection first): enables the VMC without the payment service, which has not
   * answered since the start. Members' plan vends are served (no payment in them); any other selection is
   * denied at the machine, never a payment attempt (machine.ts `membersOnly`). `paymentsBack` lifts it.
   */
  async startMembersOnly(): Promise<void> {
    if (this.opts.flow === "checkin") throw new Error("members only needs the selection-first flow");
    this.deps.display.show({ kind: "outOfService", reason: "Starting" });
    await this.begin(null);
  }

  /**
   * The payment service answered and every unresolved paid session is settled (the caller's recovery):
   * from the next vend request on, selections are paid as usual. A plan vend running now goes on.
   */
  paymentsBack(identity: PosIdentity): void {
    this.identity = identity;
    this.context = engineContext(this.opts, identity.beaconId);
    this.deps.logger.info({ posId: identity.posId, paymentsBack: true }, "unit in service");
    if (this.state.tag !== "idle" || this.failed !== null || this.serviceReason !== null) return;
    this.runEffects(rest(this.context).effects);
  }

  /** True while the engine serves members only (no payment service since the start). */
  get membersOnly(): boolean {
    return this.context?.membersOnly === true;
  }
  private async begin(identity: PosIdentity | null): Promise<void> {
    const { vmc, logger } = this.deps;
    this.identity = identity;
    this.context =
      identity === null
        ? { ...engineContext(this.opts, ""), membersOnly: true }
        : engineContext(this.opts, identity.beaconId);
    this.io = effectIO(this.deps, this.opts, this.context.flow, this.stopController.signal);
    this.unsubscribeVmc = vmc.onEvent((e) => onVmcEvent(this, e));
    try {
      await vmc.open();
    } catch (err) {
      // The VMC link could not be opened (adapter unplugged, no answer): nothing started; the caller may
      // call start again later.
      this.unsubscribeVmc();
      this.unsubscribeVmc = null;
      throw err;
    }
    if (identity === null) logger.warn("in service for members only: the payment service is not reachable");
    else logger.info({ posId: identity.posId, beaconId: identity.beaconId }, "unit in service");
    const start = rest(this.context);
    this.state = start.state;
    this.runEffects(start.effects);
  }

  /**
   * Stops: an idle payment nobody has taken is released (customers must not check in on a unit that is
   * going down), then timers and polls stop and in-flight settlements finish. Closes nothing it does not own.
   */
  async stop(): Promise<void> {
    this.serviceReason = "Stopping";
    this.releaseIdlePayment();
    // Polls and timers end now; settlements already sent finish (bounded by their own retries).
    this.activities.stopAll("engine stopped");
    this.unsubscribeVmc?.();
    await this.settledInflight();
    this.stopController.abort(new Error("engine stopped"));
    await Promise.allSettled([...this.observers]);
  }

  /** An idle payment nobody has taken yet is released now, as its customer timer would. */
  private releaseIdlePayment(): void {
    const s = this.state;
    if (s.tag === "paying" && s.purpose === "session" && !s.issued) {
      this.dispatch({ type: "timeout", sessionId: s.session.id, timer: "payment" });
    }
  }

  /** Calls `listener` when a failure takes the unit out of service (once per failure). */
  onFailure(listener: (err: Error) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /**
   * Back in service after a failure that healed (a journal that takes writes again). The caller has
   * checked the journal and settled every unresolved session first, as a restart would. What was still in
   * flight finishes; the machine starts again from its rest state, and the VMC is enabled unless the unit
   * is out of service by request meanwhile.
   */
  async resume(): Promise<void> {
    if (this.failed === null || this.context === null) return;
    await this.settledInflight();
    this.failed = null;
    const back = rest(this.context);
    this.state = back.state;
    const { vmc, display, logger } = this.deps;
    if (this.serviceReason !== null) {
      display.show({ kind: "outOfService", reason: this.serviceReason });
      return;
    }
    await vmc.setEnabled(true);
    logger.info("back in service: the failure healed");
    this.runEffects(back.effects);
  }

  onSessionFinished(listener: (s: FinishedSession) => void): () => void {
    this.finishedListeners.add(listener);
    return () => this.finishedListeners.delete(listener);
  }

  /** Resolves when no session is open and nothing is in flight (the check-in poll does not count). */
  async whenIdle(): Promise<void> {
    for (;;) {
      await this.settledInflight();
      const resting = this.state.tag === "idle" || this.state.tag === "ready";
      if (resting && this.inflight.size === 0 && this.queue.length === 0) return;
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  /**
   * Feeds one input to the machine (queued: inputs are processed strictly one at a time). `answer.record`,
   * the journal writes of the answer the input comes from, commits in the transaction of the input's step;
   * `answer.committed` runs once that step has committed.
   */
  dispatch(input: EngineInput, answer?: Answer): void {
    this.queue.push({ input, answer });
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift())
        this.step(next.input, next.answer);
    } finally {
      this.draining = false;
    }
  }

  private step(input: EngineInput, answer: Answer | undefined): void {
    const record = answer?.record;
    if (this.context === null) {
      this.deps.logger.warn({ input: input.type }, "input before the engine started; ignored");
      return;
    }
    if (this.serviceReason !== null && (input.type === "sessionAllocated" || input.type === "checkedIn")) {
      // Out of service (or stopping) no new session opens; back in service the rest state starts afresh.
      this.deps.logger.info(
        { input: input.type, reason: this.serviceReason },
        "no new session while out of service",
      );
      if (record !== undefined && this.atomic(record, false)) answer?.committed?.();
      return;
    }
    const before = this.state;
    const { state, effects } = transition(before, input, this.context);
    this.state = state;
    // A step whose journal writes did not commit did not happen: keep the state it started from.
    if (!this.runEffects(effects, record)) this.state = before;
    else answer?.committed?.();
  }

  /**
   * Runs a step's effects (after the answer's writes, `record`); false when its journal writes could not
   * be committed. The step waits for fsync only when one of its effects needs it (`needsDurableCommit`):
   * a payment intent, an approval, a settlement decision; everything else commits without waiting.
   */
  private runEffects(effects: readonly Effect[], record?: () => void): boolean {
    // Out of service, the rest state opens nothing new and keeps the out-of-service screen.
    const active = this.serviceReason === null ? effects : effects.filter((e) => !opensSessions(e));
    const io = this.io;
    if (io === null) throw new Error("engine not started");
    const run = () => {
      record?.();
      for (const effect of active) runEffect(effect, io, this.host);
    };
    // An ignored input (e.g. the session-ended report after a selection vend) opens no transaction.
    if (record === undefined && active.every((e) => e.type === "ignored")) {
      run();
      return true;
    }
    return this.atomic(run, active.some(needsDurableCommit));
  }

  /**
   * True when `input`, processed now, would make a step that needs a durable commit. The machine is pure,
   * so its effects are known before the transaction opens (SQLite sets `synchronous` only between
   * transactions); ids in the input do not change which effects a step has.
   */
  needsDurable(input: EngineInput): boolean {
    if (this.context === null) return true;
    return transition(this.state, input, this.context).effects.some(needsDurableCommit);
  }

  /** Runs `fn` in one transaction; `durable` (default true): its commit waits for the WAL fsync. */
  atomic(fn: () => void, durable = true): boolean {
    return this.tx.atomic(fn, durable);
  }

  /** Performs a request after the step commits; failures of a critical one take the unit out of service. */
  private launch(request: Request): void {
    const go = () => {
      const done = request.run().then((o) => o && this.complete(o));
      this.track(request.critical ? done : done.catch((err: unknown) => this.logFailure(err, request.what)));
    };
    this.tx.afterCommit(go);
  }

  /** A request's result: its journal writes and the input they lead to commit as one step. */
  private complete(o: Outcome): void {
    this.dispatch(o.input, o);
  }

  /** No session open in the selection flow: a vend request now may be a member's plan vend. */
  get idle(): boolean {
    return this.state.tag === "idle";
  }

  /** Vend requests are served (in service, or a sale still finishing). */
  get accepting(): boolean {
    return this.failed === null && !(this.serviceReason !== null && this.state.tag === "idle");
  }

  get broken(): boolean {
    return this.failed !== null;
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => this.fail(err));
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }

  /** A command whose failure is only logged (tracked like a mutation). */
  background(p: Promise<unknown>, what: string): void {
    this.track(p.catch((err: unknown) => this.logFailure(err, what)));
  }

  private logFailure(err: unknown, what: string): void {
    this.deps.logger.warn({ err }, `${what} failed`);
  }

  private async settledInflight(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** A journal failure (or a bug) takes the unit out of service: nothing more is approved or sent. */
  private fail(err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    const first = this.failed === null;
    if (first) this.failed = error;
    this.deps.logger.fatal({ err: error }, "engine out of service");
    if (!first) return;
    // Nothing more may happen on the engine's own initiative: timers and polls stop.
    this.activities.stopAll("out of service");
    this.deps.display.show({ kind: "outOfService", reason: "Service required" });
    // A pending vend request is denied first: a reader with a request pending cannot be switched off.
    const { vmc, logger } = this.deps;
    this.background(
      vmc
        .denyVend()
        .catch((e: unknown) => logger.debug({ err: e }, "no vend request to deny"))
        .then(() => vmc.setEnabled(false)),
      "disable VMC",
    );
    for (const l of this.failureListeners) l(error);
  }
}

/** A request's answer as the runner needs it (effects.ts Outcome). */
type Answer = Pick<Outcome, "record" | "committed">;
