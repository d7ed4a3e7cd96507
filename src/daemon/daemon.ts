import type { Logger } from "pino";
import type { LoadedConfig, VenddConfig } from "../../config/load.js";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { createDisplay } from "../../drivers/display/factory.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import { gpioOptions } from "../boards/devices.js";
import { type Clock, systemClock } from "../core/clock.js";
import { type FaultPoints, NO_FAULTS } from "../core/faults.js";
import type { Notifier } from "../core/sdnotify.js";
import { engineOptions } from "../engine/options.js";
import { type RecoveryReport, recoverSessions } from "../engine/recovery.js";
import { VendEngine } from "../engine/runner.js";
import { openSqliteJournal, type SqliteJournal, type SqliteJournalOptions } from "../journal/sqlite.js";
import type { PaymentDriver } from "../payment/driver.js";
import { createPaymentDriver } from "../payment/factory.js";
import { type ConnectPolicy, connectService, DEFAULT_CONNECT_POLICY } from "./connect.js";
import { healable, healJournal } from "./heal.js";
import { startHousekeeping } from "./housekeeping.js";
import { journalProblem, journalUnusable } from "./journalStart.js";
import { type Peripherals, startPeripherals } from "./peripherals.js";
import { ServiceState } from "./serviceState.js";
import type { UnitStatus } from "./status.js";

/** Housekeeping interval: sweeper and WAL checkpoint at idle (reliability.md §1.3), ms. */
const HOUSEKEEPING_MS = 60_000;

export interface DaemonDeps {
  logger: Logger;
  notifier: Notifier;
  clock?: Clock;
  /** Crash points for the crash tests (default none; `vendd run` arms them from VENDD_FAULT_POINT). */
  faults?: FaultPoints;
  /** Jitter of the reconnect and re-check backoff, in [0, 1) (default Math.random). */
  random?: () => number;
  /** Backoff between attempts to reach the service or re-check the journal (default DEFAULT_CONNECT_POLICY). */
  policy?: Partial<ConnectPolicy>;
  /** READY is sent at the latest this long after start, even while still connecting, ms (default 10 000). */
  readyGraceMs?: number;
  /** Operator-facing start-up problems besides the log (default: standard error). */
  stderr?: (text: string) => void;
  /** Opens the journal (default openSqliteJournal). */
  openJournal?: (opts: SqliteJournalOptions) => SqliteJournal;
  /** Already-created devices (tests); otherwise created from config. */
  devices?: { payment?: PaymentDriver; vmc?: VendController; display?: CheckinDisplay };
}

export interface Daemon {
  /** In or out of service, and every reason why not (technician console, fleet heartbeat, tests). */
  status(): UnitStatus;
  /** The engine, once the unit has gone in service for the first time (null before). */
  readonly engine: VendEngine | null;
  /** Resolves with an error that stopped the unit for good (a defect); pending in normal operation. */
  readonly failed: Promise<Error>;
  /** Calls `listener` after each status change; returns the unsubscribe function. */
  onStatus(listener: (s: UnitStatus) => void): () => void;
  stop(): Promise<void>;
}

/**
 * Starts the unit and returns as soon as it is up: journal opened (the one writer), drivers created, the
 * "out of service" screen shown. Then, in the background: reach the payment service and settle every
 * unresolved session (retried with capped backoff and jitter while the service is down or refuses), and
 * only then enable the VMC. The unit never exits because the service is down or its journal is unusable:
 * it stays out of service and says why (screen, `status()`, the systemd STATUS line, the log).
 */
export async function startDaemon(loaded: LoadedConfig, deps: DaemonDeps): Promise<Daemon> {
  const { config, secrets } = loaded;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger;
  const stderr = deps.stderr ?? ((text: string) => process.stderr.write(text));
  let journal: SqliteJournal;
  try {
    journal = (deps.openJournal ?? openSqliteJournal)({
      path: config.journal.path,
      unitId: config.unit.id,
      clock,
      sizeLimitBytes: config.journal.sizeLimitBytes,
    });
  } catch (err) {
    const problem = journalProblem(err, config.journal.path);
    // Another process owns the journal: refuse at once (`vendd run` exits non-zero with the message).
    if (problem.locked) throw err;
    const display = deps.devices?.display ?? (await openDisplay(config, logger));
    const now = () => clock.now();
    return journalUnusable(problem, {
      unitId: config.unit.id,
      logger,
      notifier: deps.notifier,
      display,
      stderr,
      now,
    });
  }
  let payment: PaymentDriver | null = null;
  let vmc: VendController | null = null;
  let display: CheckinDisplay | null = null;
  let gpio: GpioPort | null = null;
  try {
    payment =
      deps.devices?.payment ??
      (await createPaymentDriver(config, secrets, {
        clock,
        logger,
        ownsOrder: (orderId) => journal.ownsLiveOrder(orderId),
      }));
    display = deps.devices?.display ?? (await openDisplay(config, logger));
    gpio = await openGpio(config, clock, logger);
    vmc =
      deps.devices?.vmc ??
      (await createVendController(config, { clock, logger, ...(gpio === null ? {} : { gpio }) }));
  } catch (err) {
    await vmc?.close().catch(() => {});
    await payment?.close().catch(() => {});
    await display?.close().catch(() => {});
    journal.close();
    throw err;
  }
  return runUnit(loaded, { ...deps, clock, stderr }, { journal, payment, vmc, display, gpio });
}

interface Devices {
  journal: SqliteJournal;
  payment: PaymentDriver;
  vmc: VendController;
  display: CheckinDisplay;
  gpio: GpioPort | null;
}

/** The unit's life once its devices exist: connect, go in service, heal, stop. */
function runUnit(loaded: LoadedConfig, deps: DaemonDeps & { clock: Clock }, d: Devices): Daemon {
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
  let housekeeping: Promise<void> = Promise.resolve();
  let healing: Promise<unknown> = Promise.resolve();

  const recoveryLogger = logger.child({ component: "recovery" });
  let recoveries: Promise<unknown> = Promise.resolve();
  /** Recovery runs one at a time (start-up, the sweeper and the journal re-check share it). */
  const recover = (): Promise<RecoveryReport> => {
    const run = recoveries.then(async () => {
      const report = await recoverSessions(
        journal,
        { payment, clock, logger: recoveryLogger, signal: stopping.signal },
        {
          unknownOutcome: options.unknownOutcome,
          paymentMode: options.paymentMode,
          captureType: options.captureType,
        },
      );
      if (report.resolved.length + report.pending.length > 0)
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
      recover,
      resume: () => e.resume(),
      onSetback: (reason) => state.setFailure(reason),
    }).then((back) => {
      if (back) state.setFailure(null);
      else if (!stopping.signal.aborted)
        state.setFailure({ code: "failure", detail: "the journal cannot be written", retryAt: null });
    });
  };

  const serve = async (): Promise<void> => {
    const identity = await connectService({
      clock,
      random,
      signal: stopping.signal,
      logger: logger.child({ component: "connect" }),
      policy,
      open: (signal) => payment.open(signal),
      recover,
      onSetback: (reason) => state.setConnect(reason),
    });
    if (identity === null) return;
    const e = new VendEngine(
      {
        payment,
        vmc,
        display,
        journal,
        clock,
        logger: logger.child({ component: "engine" }),
        faults: deps.faults ?? NO_FAULTS,
      },
      options,
    );
    engine = e;
    e.onFailure((err) => onEngineFailure(e, err));
    await e.start(identity);
    state.setConnect(null);
    const control = {
      get pos() {
        return e.pos;
      },
      async setOutOfService(reason: string | null) {
        state.setRequested(peripherals?.doorOpen ?? false, peripherals?.serviceMode ?? false);
        await e.setOutOfService(reason);
      },
    };
    peripherals = await startPeripherals(config, { clock, logger, engine: control, gpio: d.gpio });
    if (stopping.signal.aborted) return;
    housekeeping = startHousekeeping({
      clock,
      intervalMs: HOUSEKEEPING_MS,
      signal: stopping.signal,
      logger: logger.child({ component: "housekeeping" }),
      idle: () => e.current.tag === "idle" && e.failure === null,
      // The sweeper: settles sessions left unsettled, using only the journal's own decisions.
      sweep: async () => {
        await recover();
      },
      checkpoint: () => journal.checkpoint(),
      retain: () => journal.retain(clock.now() - config.journal.retentionDays * 86_400_000),
    });
  };

  state.setConnect({ code: "starting", detail: "connecting to the payment service", retryAt: null });
  const readyTimer = clock.setTimer(deps.readyGraceMs ?? 10_000, () => state.ready());
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
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
    onStatus: (listener) => state.onStatus(listener),
    async stop() {
      state.setStopping();
      deps.notifier.stopping();
      stopping.abort(new Error("daemon stopping"));
      readyTimer.cancel();
      await serving;
      await healing;
      await housekeeping;
      await peripherals?.close();
      const e = engine;
      if (e !== null) {
        await vmc.setEnabled(false).catch(() => {});
        await e.stop();
      }
      state.close();
      await vmc.close();
      await payment.close();
      await display.close();
      if (config.vmc.driver !== "pulse") await d.gpio?.close().catch(() => {});
      journal.close();
    },
  };
}

async function openDisplay(config: VenddConfig, logger: Logger): Promise<CheckinDisplay> {
  return createDisplay(config.display.kind, {
    devicePath: config.display.device,
    logger: logger.child({ component: "display" }),
  });
}

/**
 * One GPIO port for the whole unit, when the board uses GPIO (the pulse controller, or panel pins). The
 * pulse controller opens it itself; otherwise it is opened here. An unavailable port degrades the panel,
 * it does not stop the unit (unless the pulse controller needs it, which then fails to open).
 */
async function openGpio(config: VenddConfig, clock: Clock, logger: Logger): Promise<GpioPort | null> {
  const pins = config.gpio.pins;
  const panel = pins.statusLed !== null || pins.serviceButton !== null || pins.doorSwitch !== null;
  if (config.vmc.driver !== "pulse" && !panel) return null;
  const { createGpio } = await import("../../drivers/gpio/factory.js");
  const port = await createGpio(gpioOptions(config, { clock, logger }));
  if (config.vmc.driver === "pulse") return port;
  try {
    await port.open();
    return port;
  } catch (err) {
    logger.warn({ err }, "GPIO unavailable: no status LED, service button or door switch");
    return null;
  }
}
