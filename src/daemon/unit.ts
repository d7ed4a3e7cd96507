import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import { type VendController, VmcError } from "../../drivers/vmc/controller.js";
import type { LoadedConfig } from "../config/load.js";
import { engineOptions } from "../config/seams.js";
import type { Clock } from "../core/clock.js";
import { NO_FAULTS } from "../core/faults.js";
import { createEngine } from "../engine/factory.js";
import { type RecoveryReport, recoverSessions } from "../engine/recovery.js";
import type { VendEngine } from "../engine/runner.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { PaymentDriver, PosIdentity } from "../payment/driver.js";
import { backoffDelay } from "../payment/retry.js";
import { connectService, DEFAULT_CONNECT_POLICY } from "./connect.js";
import type { ControlServer } from "./control.js";
import { auditUpdateOutcome, startControl } from "./controlUnit.js";
import type { Daemon, DaemonDeps } from "./daemon.js";
import { DEX_BUSY_REASON, type DexReads } from "./dexReads.js";
import { startDexReads } from "./dexUnit.js";
import { type FleetUnit, startFleetUnit } from "./fleetUnit.js";
import { healable, healJournal } from "./heal.js";
import { startHousekeeping } from "./housekeeping.js";
import { startMembers } from "./members.js";
import { type Peripherals, startPeripherals } from "./peripherals.js";
import { ServiceState } from "./serviceState.js";

/** Housekeeping interval: sweeper and WAL checkpoint at idle (reliability.md §1.3), ms. */
const HOUSEKEEPING_MS = 60_000;

/** What the daemon opened for the unit; the unit closes them when it stops. */
export interface Devices {
  journal: SqliteJournal;
  payment: PaymentDriver;
  vmc: VendController;
  display: CheckinDisplay;
  gpio: GpioPort | null;
  /** An NFC station already created (tests reach the simulated reader through it); otherwise from config. */
  nfc?: NfcStation;
}

/**
 * The unit's life once its devices exist: reach the service and settle what the journal left (connect.ts),
 * go in service, re-check the journal after a write failure that can heal (heal.ts), stop. Everything the
 * unit says about its state goes through one ServiceState.
 */
export function runUnit(loaded: LoadedConfig, deps: DaemonDeps & { clock: Clock }, d: Devices): Daemon {
  const { config } = loaded;
  const { clock, logger } = deps;
  const { journal, payment, vmc, display } = d;
  const random = deps.random ?? Math.random;
  const policy = { ...DEFAULT_CONNECT_POLICY, ...deps.policy };
  const options = engineOptions(config);
  const stopping = new AbortController();
  const state = new ServiceState({ unitId: config.unit.id, clock, notifier: deps.notifier, display });
  let engine: VendEngine | null = null;
  let peripherals: Peripherals | null = null;
  /**
   * A DEX read is running (the machine's port is in use): part of every recomputed reason, so neither the
   * console's `service in` nor a peripheral's change enables the cashless device mid-read.
   */
  let dexBusy = false;
  const dexReason = (): string | null => (dexBusy ? DEX_BUSY_REASON : null);
  let housekeeping: Promise<void> = Promise.resolve();
  let healing: Promise<unknown> = Promise.resolve();
  /** DEX audit reads (issue 36), when dex.enabled. */
  let dex: DexReads | null = null;

  const members = startMembers(loaded, deps, d, () => engine?.idle ?? false);

  const recoveryLogger = logger.child({ component: "recovery" });
  let recoveries: Promise<unknown> = Promise.resolve();
  /** Recovery runs one at a time (start-up, the sweeper and the journal re-check share it). */
  const recover = (only?: "only"): Promise<RecoveryReport> => {
    // A running engine owns its plan vend (members only, or in service): recovery leaves plan vends to it.
    const planVends = only ?? (engine !== null && engine.failure === null ? "leave" : "recover");
    const run = recoveries.then(async () => {
      const report = await recoverSessions(
        journal,
        { payment, logger: recoveryLogger, signal: stopping.signal },
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
      probe: () => journal.event(null, "journal-check", { at: clock.now() }),
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

  /**
   * Starts the engine, retrying while the VMC link cannot be opened (adapter unplugged or not answering):
   * the unit stays up out of service and says why, with capped backoff and jitter, instead of exiting and
   * being restarted in a loop. False when the daemon stops first.
   */
  const startEngine = async (e: VendEngine, identity: PosIdentity | null): Promise<boolean> => {
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

  /** A new engine for the unit (none runs before; one per daemon). */
  const makeEngine = (): VendEngine => {
    const e = createEngine(options, {
      payment,
      vmc,
      display,
      journal,
      clock,
      logger: logger.child({ component: "engine" }),
      faults: deps.faults ?? NO_FAULTS,
      random,
      ...(members === null ? {} : { plans: members.gate }),
    });
    engine = e;
    e.onFailure((err) => onEngineFailure(e, err));
    return e;
  };

  /** The engine's peripherals (service button, door, beacon, NFC reader for badges), once it runs. */
  const attachPeripherals = async (e: VendEngine): Promise<void> => {
    const control = {
      get pos() {
        return e.pos;
      },
      async setOutOfService(reason: string | null) {
        state.setRequested(
          peripherals?.doorOpen ?? false,
          (peripherals?.serviceMode ?? false) || consoleReason !== null,
        );
        await e.setOutOfService(reason ?? consoleReason ?? dexReason());
      },
    };
    if (consoleReason !== null) await control.setOutOfService(null);
    peripherals = await startPeripherals(config, {
      clock,
      logger,
      engine: control,
      gpio: d.gpio,
      ...(members === null ? {} : { members: members.gate }),
      ...(d.nfc === undefined ? {} : { devices: { nfc: d.nfc } }),
    });
  };

  /**
   * Members only (issue 31): with a valid entitlement list (selection first), the VMC is enabled and the
   * reader started before the payment service answers, so members vend through an outage, also after a
   * restart. Plan vends a crash left open are settled first from the journal alone (nothing to ask the
   * service); paid sessions wait for the service in `connectService` as before, and no paid session can
   * open meanwhile. Null when members only does not apply or the daemon stops first.
   */
  const serveMembers = async (): Promise<VendEngine | null> => {
    if (members === null || (options.flow ?? "selection") !== "selection") return null;
    if (members.store.current() === null) {
      logger.info("no entitlement list in force: nobody is served before the payment service answers");
      return null;
    }
    await recover("only");
    const e = makeEngine();
    if (!(await startEngine(e, null))) return null;
    state.setMembersOnly(true);
    await attachPeripherals(e);
    return e;
  };

  const serve = async (): Promise<void> => {
    let e = await serveMembers();
    if (stopping.signal.aborted) return;
    const identity = await connectService({
      clock,
      random,
      signal: stopping.signal,
      logger: logger.child({ component: "connect" }),
      policy,
      open: (signal) => payment.open(signal),
      recover: () => recover(),
      onSetback: (reason) => state.setConnect(reason),
    });
    if (identity === null) return;
    if (e === null) {
      e = makeEngine();
      if (!(await startEngine(e, identity))) return;
      state.setConnect(null);
      await attachPeripherals(e);
    } else {
      e.paymentsBack(identity);
      state.setMembersOnly(false);
      state.setConnect(null);
      peripherals?.refreshBeacon();
    }
    if (stopping.signal.aborted) return;
    const live = e;
    dex = startDexReads({
      config,
      clock,
      logger,
      journal,
      vmc,
      engineIdle: () => live.current.tag === "idle" && live.failure === null,
      setBusy: (busy) => {
        dexBusy = busy;
        return live.setOutOfService(consoleReason ?? peripherals?.reason ?? dexReason());
      },
    });
    housekeeping = startHousekeeping({
      clock,
      intervalMs: HOUSEKEEPING_MS,
      signal: stopping.signal,
      logger: logger.child({ component: "housekeeping" }),
      idle: () => live.current.tag === "idle" && live.failure === null,
      // The sweeper: settles sessions left unsettled, using only the journal's own decisions.
      sweep: async () => {
        await recover();
      },
      checkpoint: () => journal.checkpoint(),
      retain: () => {
        fleetUnit?.retain();
        return journal.retain(clock.now() - config.journal.retentionDays * 86_400_000);
      },
    });
  };

  /** Out of service by the technician console (`service out REASON`), or null. */
  let consoleReason: string | null = null;
  let requestRestart: (why: string) => void = () => {};
  const restartRequested = new Promise<string>((resolve) => {
    requestRestart = resolve;
  });
  let controlServer: Promise<ControlServer | null> = Promise.resolve(null);
  if (deps.control !== false) {
    controlServer = startControl(
      {
        config,
        configFile: deps.configFile ?? null,
        env: deps.env ?? process.env,
        journal,
        vmc,
        now: () => clock.now(),
        status: () => state.status(),
        engine: () => engine,
        beacon: () => (peripherals?.beacon === null || peripherals === null ? "off" : "on"),
        serviceReason: () => consoleReason ?? peripherals?.reason ?? dexReason(),
        async setService(reason) {
          consoleReason = reason;
          const e = engine;
          if (e === null) {
            state.setRequested(peripherals?.doorOpen ?? false, reason !== null);
            return;
          }
          state.setRequested(
            peripherals?.doorOpen ?? false,
            (peripherals?.serviceMode ?? false) || reason !== null,
          );
          await e.setOutOfService(reason ?? peripherals?.reason ?? dexReason());
        },
        logs: deps.logRing ?? null,
        restart: (why) => requestRestart(why),
        fleet: () => fleetUnit?.status() ?? null,
        dex: () => dex,
      },
      { clock, logger },
    );
  }
  state.setConnect({ code: "starting", detail: "connecting to the payment service", retryAt: null });
  // The fleet link (config `fleet`): outbox events of status changes, the sender and the heartbeat. Never in
  // the money path: nothing above waits for it.
  const fleetUnit: FleetUnit | null = startFleetUnit({
    config,
    journal,
    clock,
    random,
    logger,
    version: deps.version ?? "unknown",
    status: () => state.status(),
    onStatus: (l) => state.onStatus(l),
    ...(deps.fleetFaults === undefined ? {} : { faults: deps.fleetFaults }),
    // Issue 18: the heartbeat's entitlementsEtag keeps the member list current (fetched, verified, installed).
    ...(members === null ? {} : { entitlements: members.store }),
  });
  auditUpdateOutcome(config, journal, logger);
  const readyTimer = clock.setTimer(deps.readyGraceMs ?? 10_000, () => state.ready());
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });
  // Another process serving this unit's control socket is a second daemon configured like this one: fatal.
  void controlServer.catch((err: unknown) => {
    const error = err instanceof Error ? err : new Error(String(err));
    logger.fatal({ err: error }, "the unit cannot run");
    fail(error);
  });
  const serving = serve().catch((err: unknown) => {
    const error = err instanceof Error ? err : new Error(String(err));
    logger.fatal({ err: error }, "the unit cannot run");
    fail(error);
  });

  return {
    status: () => state.status(),
    get engine() {
      return engine;
    },
    failed,
    restartRequested,
    onStatus: (listener) => state.onStatus(listener),
    async stop() {
      await (await controlServer.catch(() => null))?.close();
      state.setStopping();
      deps.notifier.stopping();
      stopping.abort(new Error("daemon stopping"));
      readyTimer.cancel();
      await serving;
      await healing;
      await housekeeping;
      await dex?.stop();
      await fleetUnit?.stop();
      await peripherals?.close();
      members?.close();
      const e = engine;
      if (e !== null) {
        await vmc.setEnabled(false).catch(() => {});
        await e.stop();
      }
      state.close();
      // Each device is closed even if another fails to; the journal last (a clean checkpoint).
      const closing = (what: string) => (err: unknown) => logger.warn({ err }, `closing the ${what} failed`);
      await vmc.close().catch(closing("VMC"));
      await payment.close().catch(closing("payment driver"));
      await display.close().catch(closing("display"));
      if (config.vmc.driver !== "pulse") await d.gpio?.close().catch(closing("GPIO port"));
      journal.close();
    },
  };
}
