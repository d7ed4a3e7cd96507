/**
 * The engine part: the one engine of the unit (created by the service part when the unit first serves,
 * members only or in service), the recovery every part shares (one run at a time), and the re-check of the
 * journal after a write failure that can heal (journalRecheck.ts). When the unit stops, the VMC is disabled and the
 * engine stopped, after the parts around it (peripherals, members, fleet link) have stopped.
 */
import { VmcError } from "../../../drivers/vmc/controller.js";
import { NO_FAULTS } from "../../core/faults.js";
import { createEngine } from "../../engine/factory.js";
import { type RecoveryReport, recoverSessions } from "../../engine/recovery.js";
import type { VendEngine } from "../../engine/runner.js";
import type { PosIdentity } from "../../payment/driver.js";
import { backoffDelay } from "../../payment/retry.js";
import { healable, healJournal } from "../journalRecheck.js";
import type { UnitContext } from "./context.js";
import type { MembersPart } from "./members.js";
import type { Part } from "./part.js";

export interface EnginePart extends Part<{ state: string; failed: boolean } | null> {
  /** The engine, once created (null before). */
  readonly current: VendEngine | null;
  /** The running journal re-check (resolved when none runs). */
  readonly healing: Promise<unknown>;
  /** Recovery, one run at a time (start-up, the sweeper and the journal re-check share it). */
  recover(only?: "only"): Promise<RecoveryReport>;
  /** A new engine for the unit (none runs before; one per daemon). */
  create(): VendEngine;
  /**
   * Starts the engine, retrying while the VMC link cannot be opened (adapter unplugged or not answering):
   * the unit stays up out of service and says why, with capped backoff and jitter, instead of exiting and
   * being restarted in a loop. False when the daemon stops first.
   */
  run(e: VendEngine, identity: PosIdentity | null): Promise<boolean>;
}

/** The one engine of the unit; see EnginePart. */
class UnitEngine implements EnginePart {
  readonly name = "engine";
  private ctx: UnitContext | null = null;
  private engine: VendEngine | null = null;
  private healingRun: Promise<unknown> = Promise.resolve();
  private recoveries: Promise<unknown> = Promise.resolve();

  constructor(private readonly members: MembersPart) {}

  get current(): VendEngine | null {
    return this.engine;
  }

  get healing(): Promise<unknown> {
    return this.healingRun;
  }

  private started(): UnitContext {
    if (this.ctx === null) throw new Error("the engine part is used before it started");
    return this.ctx;
  }

  recover(only?: "only"): Promise<RecoveryReport> {
    const { devices, logger, options, stopping } = this.started();
    const recoveryLogger = logger.child({ component: "recovery" });
    // A running engine owns its plan vend (members only, or in service): recovery leaves plan vends to it.
    const planVends = only ?? (this.engine !== null && this.engine.failure === null ? "leave" : "recover");
    const run = this.recoveries.then(async () => {
      const report = await recoverSessions(
        devices.journal,
        { payment: devices.payment, logger: recoveryLogger, signal: stopping.signal },
        {
          unknownOutcome: options.unknownOutcome,
          paymentMode: options.paymentMode,
          captureType: options.captureType,
          planVends,
        },
      );
      if (report.resolved.length + report.pending.length + report.conflicts.length > 0)
        recoveryLogger.warn({ report }, "unresolved sessions");
      for (const p of report.pending.filter((x) => !x.waiting))
        recoveryLogger.error(
          { orderId: p.orderId, why: p.why },
          "the service contradicts the journal: needs review",
        );
      return report;
    });
    this.recoveries = run.catch(() => {});
    return run;
  }

  private onEngineFailure(e: VendEngine, err: Error): void {
    const { clock, random, stopping, logger, policy, state, devices } = this.started();
    if (!healable(err)) {
      state.setFailure({
        code: "failure",
        detail: `out of service after an error: ${err.message}`,
        retryAt: null,
      });
      return;
    }
    this.healingRun = healJournal(err, {
      clock,
      random,
      signal: stopping.signal,
      logger: logger.child({ component: "journal-check" }),
      policy,
      probe: () => devices.journal.event(null, "journal-check", { at: clock.now() }),
      // Members only, the paid sessions are the last run's, still waiting for the service (connectService):
      // the engine's own plan vends are settled, and members are served again without waiting for them.
      recover: () => this.recover(e.membersOnly ? "only" : undefined),
      resume: () => e.resume(),
      onSetback: (reason) => state.setFailure(reason),
    }).then((back) => {
      // Back in service, unless a write failed again as it resumed (then a new re-check runs).
      if (back && e.failure === null) state.setFailure(null);
      else if (!stopping.signal.aborted)
        state.setFailure({ code: "failure", detail: "the journal cannot be written", retryAt: null });
    });
  }

  async run(e: VendEngine, identity: PosIdentity | null): Promise<boolean> {
    const { clock, random, stopping, logger, policy, state } = this.started();
    for (let failures = 1; ; failures++) {
      try {
        await (identity === null ? e.startMembersOnly() : e.start(identity));
        return true;
      } catch (err) {
        if (!(err instanceof VmcError) || err.code === "closed" || stopping.signal.aborted) throw err;
        const delay = backoffDelay(failures, policy, random);
        const reason = {
          code: "vmcUnavailable" as const,
          detail: `vending machine link unavailable (${err.code}): ${err.message}`,
          retryAt: clock.now() + delay,
        };
        logger.warn({ reason: reason.code, detail: reason.detail, retryInMs: delay }, "out of service");
        state.setConnect(reason);
        try {
          await clock.sleep(delay, stopping.signal);
        } catch {
          return false;
        }
      }
    }
  }

  create(): VendEngine {
    const { options, devices, clock, logger, deps, random } = this.started();
    const gate = this.members.current?.gate;
    const e = createEngine(options, {
      payment: devices.payment,
      vmc: devices.vmc,
      display: devices.display,
      journal: devices.journal,
      clock,
      logger: logger.child({ component: "engine" }),
      faults: deps.faults ?? NO_FAULTS,
      random,
      ...(gate === undefined ? {} : { plans: gate }),
    });
    this.engine = e;
    e.onFailure((err) => this.onEngineFailure(e, err));
    return e;
  }

  start(ctx: UnitContext): void {
    this.ctx = ctx;
  }

  async stop(): Promise<void> {
    const e = this.engine;
    if (e !== null && this.ctx !== null) {
      await this.ctx.devices.vmc.setEnabled(false).catch(() => {});
      await e.stop();
    }
  }

  status(): { state: string; failed: boolean } | null {
    const e = this.engine;
    return e === null ? null : { state: e.current.tag, failed: e.failure !== null };
  }
}

export function enginePart(members: MembersPart): EnginePart {
  return new UnitEngine(members);
}
