/**
 * The daemon's own types: what it is given (DaemonDeps) and what it hands back (Daemon). In a file of their
 * own so the daemon's parts import them without a circle through daemon.ts.
 */
import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import type { VenddConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import type { FaultPoints, FleetFaultPoints } from "../core/faults.js";
import type { LogRing } from "../core/logRing.js";
import type { Notifier } from "../core/sdnotify.js";
import type { VendEngine } from "../engine/runner.js";
import type { JournalDeps, JournalOptions } from "../journal/factory.js";
import type { SqliteJournal } from "../journal/sqlite.js";
import type { PaymentDriver } from "../payment/driver.js";
import type { ConnectPolicy } from "./connect.js";
import type { UnitStatus } from "./status.js";

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
