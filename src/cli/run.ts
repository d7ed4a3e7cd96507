import { parseArgs } from "node:util";
import pino, { type Logger } from "pino";
import { ConfigError, type LoadOptions, loadConfig, secretValues } from "../config/load.js";
import {
  type FaultPoints,
  type FleetFaultPoints,
  faultPointsFromEnv,
  fleetFaultPointsFromEnv,
  NO_FAULTS,
} from "../core/faults.js";
import { createLogger } from "../core/log.js";
import { LogRing } from "../core/logRing.js";
import { createNotifier } from "../core/sdnotify.js";
import { loopStallFromEnv } from "../core/sdnotifyStall.js";
import { SecretRegistry } from "../core/secrets.js";
import { RESTART_EXIT_CODE } from "../daemon/configApply.js";
import { type Daemon, startDaemon } from "../daemon/daemon.js";
import { describeRefusal } from "../journal/problems.js";
import { renderCommandUsage } from "./commandTable.js";
import { createReloader } from "./reload.js";
import { RUN_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";
import { packageVersion } from "./version.js";

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "run"))}
Runs the unit daemon. Invalid configuration is refused with every error listed by path.
SIGHUP (systemctl reload vendd) reads the configuration again: an invalid one is logged and ignored,
logging.level and the console login (console.pinHash, nfc.badges) are applied at once, and any other
change is logged as needing a restart.
`;

/** The crash points `VENDD_FAULT_POINT` arms (crash tests only), each armed one logged loudly. */
function armedFaults(logger: Logger): { faults: FaultPoints; fleetFaults: FleetFaultPoints | undefined } {
  const armed = process.env.VENDD_FAULT_POINT;
  // One variable arms one point: a fleet sender's point (`fleet.*`) or one of the money path.
  const fleetPoint = armed?.startsWith("fleet.") === true;
  const faults = fleetPoint ? NO_FAULTS : faultPointsFromEnv(process.env);
  const fleetFaults = fleetPoint ? fleetFaultPointsFromEnv(process.env) : undefined;
  if (armed !== undefined && armed !== "") {
    // Crash tests only (README, "What the tests prove"): loud, because on a unit it means a planned crash.
    logger.error(
      { faultPoint: armed },
      "VENDD_FAULT_POINT is armed: this process kills itself (SIGKILL) at that step of the money path; crash tests only, unset it on a unit",
    );
  }
  // The SIGUSR2 handler stays for the life of the process.
  if (loopStallFromEnv(process.env) !== null) {
    // The notify test only: SIGUSR2 then blocks the event loop (and so the watchdog pings).
    logger.error(
      { stallMs: process.env.VENDD_FAULT_STALL_MS },
      "VENDD_FAULT_STALL_MS is armed: SIGUSR2 blocks the event loop; notify tests only, unset it on a unit",
    );
  }
  return { faults, fleetFaults };
}

/** Runs until a stop or restart request or a fatal error, then stops the daemon: the exit code. */
async function serveUntilEnd(
  daemon: Daemon,
  stopRequested: Promise<void>,
  logger: Logger,
  onHangup: () => void,
): Promise<number> {
  const restart = daemon.restartRequested ?? new Promise<string>(() => {});
  const failure = await Promise.race([
    stopRequested.then(() => null),
    restart.then((why) => why),
    daemon.failed,
  ]);
  logger.info("stopping");
  await daemon.stop();
  process.off("SIGHUP", onHangup);
  if (failure === null) return 0;
  if (typeof failure === "string") {
    logger.info({ why: failure }, "stopped to be restarted (exit 75)");
    return RESTART_EXIT_CODE;
  }
  process.stderr.write(`vendd run: ${failure.message}\n`);
  return 1;
}

/** `vendd run`: the daemon systemd starts. */
export async function runCommand(argv: string[]): Promise<number> {
  let values: { config?: string; secrets?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: RUN_OPTIONS,
    }).values;
  } catch (err) {
    process.stderr.write(`vendd run: ${(err as Error).message}\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.config === undefined) {
    process.stderr.write(`vendd run: --config FILE is required\n${HELP}`);
    return 2;
  }
  const file = values.config;
  const loadOptions: LoadOptions = values.secrets === undefined ? {} : { secretsFile: values.secrets };
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(file, loadOptions);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`vendd run: refusing to start, invalid configuration:\n${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const secrets = new SecretRegistry(secretValues(loaded.secrets));
  const logRing = new LogRing();
  const logger = createLogger({
    level: loaded.config.logging.level,
    secrets,
    base: { unit: loaded.config.unit.id },
    destination: logRing.tee(pino.destination({ dest: 2, sync: true })),
  });
  for (const w of loaded.warnings) logger.warn(w);
  const { faults, fleetFaults } = armedFaults(logger);
  const notifier = createNotifier(process.env, logger);
  if (notifier.enabled) logger.info({ transport: notifier.transport, pid: process.pid }, "systemd notify");
  // Handlers first: a stop request during start-up waits for the start to finish, then stops cleanly; a
  // reload during start-up is handled like any other (Node's default for SIGHUP would end the process).
  const stopRequested = new Promise<void>((resolve) => {
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  let started: Daemon | null = null;
  const reload = createReloader({
    file,
    load: loadOptions,
    running: loaded,
    logger,
    secrets,
    reloadLogin: () => (started?.reloadLogin === undefined ? null : (c) => started?.reloadLogin?.(c)),
  });
  const onHangup = () => void reload();
  process.on("SIGHUP", onHangup);
  // Up even when the payment service is down or the journal is unusable (out of service, saying why): only
  // a journal locked by another process, a bad device config or a defect ends it with an error.
  let daemon: Daemon;
  try {
    daemon = await startDaemon(loaded, {
      logger,
      notifier,
      faults,
      ...(fleetFaults === undefined ? {} : { fleetFaults }),
      version: packageVersion(),
      configFile: file,
      logRing,
    });
  } catch (err) {
    process.off("SIGHUP", onHangup);
    // The journal is owned before anything else starts: nothing was sent or written.
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    process.stderr.write(`vendd run: ${refusal}`);
    return 1;
  }
  started = daemon;
  return serveUntilEnd(daemon, stopRequested, logger, onHangup);
}
