import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { createDisplay } from "../../drivers/display/factory.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import type { LoadedConfig, VenddConfig } from "../config/load.js";
import { displayOptions, gpioOptions, journalOptions, paymentOptions, vmcOptions } from "../config/seams.js";
import { type Clock, systemClock } from "../core/clock.js";
import type { FaultPoints, FleetFaultPoints } from "../core/faults.js";
import type { LogRing } from "../core/logRing.js";
import type { Notifier } from "../core/sdnotify.js";
import type { VendEngine } from "../engine/runner.js";
import { createJournal, type JournalDeps, type JournalOptions } from "../journal/factory.js";
import { describeRefusal } from "../journal/problems.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { PaymentDriver } from "../payment/driver.js";
import { createPaymentDriver } from "../payment/factory.js";
import type { ConnectPolicy } from "./connect.js";
import { journalProblem, journalUnusable } from "./journalStart.js";
import type { UnitStatus } from "./status.js";
import { runUnit } from "./unit.js";

export interface DaemonDeps {
  logger: Logger;
  notifier: Notifier;
  clock?: Clock;
  /** Crash points for the crash tests (default none; `vendd run` arms them from VENDD_FAULT_POINT). */
  faults?: FaultPoints;
  /** Crash points of the fleet sender (default none; `vendd run` arms them from VENDD_FAULT_POINT). */
  fleetFaults?: FleetFaultPoints;
  /** The running vendd version (the fleet heartbeat and `version` event); default `unknown`. */
  version?: string;
  /** Runs the payment requests' deadlines (default `clock`): real time where a test steps `clock` by hand. */
  requestClock?: Clock;
  /** Jitter of the reconnect and re-check backoff, in [0, 1) (default Math.random). */
  random?: () => number;
  /** Backoff between attempts to reach the service or re-check the journal (default DEFAULT_CONNECT_POLICY). */
  policy?: Partial<ConnectPolicy>;
  /** READY is sent at the latest this long after start, even while still connecting, ms (default 10 000). */
  readyGraceMs?: number;
  /** Operator-facing start-up problems besides the log (default: standard error). */
  stderr?: (text: string) => void;
  /** Opens the journal (default createJournal). */
  openJournal?: (options: JournalOptions, deps: JournalDeps) => SqliteJournal;
  /** The config file the daemon runs from (the console's `config set|apply`); none when built in code. */
  configFile?: string;
  /** Environment the config is validated against (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Recent log lines (the console's `logs` and `errors`), fed by the logger. */
  logRing?: LogRing;
  /** Serve the control socket (default true). */
  control?: boolean;
  /** Already-created devices (tests); otherwise created from config. */
  devices?: { payment?: PaymentDriver; vmc?: VendController; display?: CheckinDisplay; nfc?: NfcStation };
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
  /** Resolves when the daemon asks to be restarted (console `restart`, `config apply`): stop, exit 75. */
  readonly restartRequested?: Promise<string>;
  /**
   * A reloaded config's console login (`console.pinHash`, `nfc.badges`: SIGHUP, src/cli/reload.ts): the
   * console's next login and the NFC reader's next tap are checked against it.
   */
  reloadLogin?(config: VenddConfig): void;
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
    journal = (deps.openJournal ?? createJournal)(journalOptions(config), { clock });
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
      refusal: describeRefusal(err),
    });
  }
  let payment: PaymentDriver | null = null;
  let vmc: VendController | null = null;
  let display: CheckinDisplay | null = null;
  let gpio: GpioPort | null = null;
  try {
    payment =
      deps.devices?.payment ??
      (await createPaymentDriver(paymentOptions(config, secrets), {
        clock,
        ...(deps.requestClock === undefined ? {} : { deadlineClock: deps.requestClock }),
        logger,
        ownsOrder: (orderId) => journal.ownsLiveOrder(orderId),
      }));
    display = deps.devices?.display ?? (await openDisplay(config, logger));
    gpio = await openGpio(config, clock, logger);
    vmc =
      deps.devices?.vmc ??
      (await createVendController(vmcOptions(config), {
        clock,
        logger,
        ...(gpio === null ? {} : { gpio }),
      }));
  } catch (err) {
    await vmc?.close().catch(() => {});
    await payment?.close().catch(() => {});
    await display?.close().catch(() => {});
    journal.close();
    throw err;
  }
  return runUnit(
    loaded,
    { ...deps, clock },
    {
      journal,
      payment,
      vmc,
      display,
      gpio,
      ...(deps.devices?.nfc === undefined ? {} : { nfc: deps.devices.nfc }),
    },
  );
}

async function openDisplay(config: VenddConfig, logger: Logger): Promise<CheckinDisplay> {
  return createDisplay(displayOptions(config), { logger });
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
  const port = await createGpio(gpioOptions(config), { clock, logger });
  if (config.vmc.driver === "pulse") return port;
  try {
    await port.open();
    return port;
  } catch (err) {
    logger.warn({ err }, "GPIO unavailable: no status LED, service button or door switch");
    return null;
  }
}
