/**
 * The engine part: the one engine of the unit (created by the service part when the unit first serves,
 * members only or in service), the recovery every part shares (one run at a time), and the re-check of the
 * journal after a write failure that can heal (heal.ts). When the unit stops, the VMC is disabled and the
 * engine stopped, after the parts around it (peripherals, members, fleet link) have stopped.
 */
import { VmcError } from "../../../drivers/vmc/controller.js";
import { NO_FAULTS } from "../../core/faults.js";
import { createEngine } from "../../engine/factory.js";
import { type RecoveryReport, recoverSessions } from "../../engine/recovery.js";
import type { VendEngine } from "../../engine/runner.js";
import type { PosIdentity } from "../../payment/driver.js";
import { backoffDelay } from "../../payment/retry.js";
import { healable, healJournal } from "../heal.js";
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

export function enginePart(members: MembersPart): EnginePart {
  let ctx: UnitContext | null = null;
  let engine: VendEngine | null = null;
  let healing: Promise<unknown> = Promise.resolve();
  let recoveries: Promise<unknown> = Promise.resolve();
  const started = (): UnitContext => {
    if (ctx === null) throw new Error("the engine part is used before it started");
    return ctx;
  };

  const recover = (only?: "only"): Promise<RecoveryReport> => {
    const { devices, logger, options, stopping } = started();
    const recoveryLogger = logger.child({ component: "recovery" });
    // A running engine owns its plan vend (members only, or in service): recovery leaves plan vends to it.
    const planVends = only ?? (engine !== null && engine.failure === null ? "leave" : "recover");
    const run = recoveries.then(async () => {
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
    recoveries = run.catch(() => {});
    return run;
  };

  const onEngineFailure = (e: VendEngine, err: Error) => {
    const { clock, random, stopping, logger, policy, state, devices } = started();
    if (!healable(err)) {
      state.setFailure({
        code: "failure",
        detail: `out of service after an error: ${err.message}`,
        retryAt: null,
      });
      return;
    }
    healing = healJournal(err, {
      clock,
      random,
      signal: stopping.signal,
      logger: logger.child({ component: "journal-check" }),
      policy,
      probe: () => devices.journal.event(null, "journal-check", { at: clock.now() }),
      // Members only, the paid sessions are the last run's, still waiting for the service (connectService):
      // the engine's own plan vends are settled, and members are served again without waiting for them.
      recover: () => recover(e.membersOnly ? "only" : undefined),
      resume: () => e.resume(),
      onSetback: (reason) => state.setFailure(reason),
    }).then((back) => {
      // Back in service, unless a write failed again as it resumed (then a new re-check runs).
      if (back && e.failure === null) state.setFailure(null);
      else if (!stopping.signal.aborted)
        state.setFailure({ code: "failure", detail: "the journal cannot be written", retryAt: null });
    });
  };

  const run = async (e: VendEngine, identity: PosIdentity | null): Promise<boolean> => {
    const { clock, random, stopping, logger, policy, state } = started();
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
  };

  const create = (): VendEngine => {
    const { options, devices, clock, logger, deps, random } = started();
    const gate = members.current?.gate;
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
    engine = e;
    e.onFailure((err) => onEngineFailure(e, err));
    return e;
  };

  return {
    name: "engine",
    get current() {
      return engine;
    },
    get healing() {
      return healing;
    },
    recover,
    create,
    run,
    start(c) {
      ctx = c;
    },
    async stop() {
      const e = engine;
      if (e !== null && ctx !== null) {
        await ctx.devices.vmc.setEnabled(false).catch(() => {});
        await e.stop();
      }
    },
    status: () => (engine === null ? null : { state: engine.current.tag, failed: engine.failure !== null }),
  };
}
