import { parseArgs } from "node:util";
import { ConfigError, loadConfig, secretValues } from "../../config/load.js";
import { faultPointsFromEnv } from "../core/faults.js";
import { createLogger } from "../core/log.js";
import { createNotifier } from "../core/sdnotify.js";
import { startDaemon } from "../daemon/daemon.js";
import { describeRefusal } from "../journal/problems.js";
import { RUN_OPTIONS } from "./commands.js";

const HELP = `usage: vendd run --config FILE [--secrets FILE]

Runs the unit daemon. Invalid configuration is refused with every error listed by path.
`;

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
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(values.config, values.secrets === undefined ? {} : { secretsFile: values.secrets });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`vendd run: refusing to start, invalid configuration:\n${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const logger = createLogger({
    level: loaded.config.logging.level,
    secrets: secretValues(loaded.secrets),
    base: { unit: loaded.config.unit.id },
  });
  for (const w of loaded.warnings) logger.warn(w);
  const notifier = createNotifier(process.env, logger);
  // Handlers first: a stop request during start-up waits for the start to finish, then stops cleanly.
  const stopRequested = new Promise<void>((resolve) => {
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  // Up even when the payment service is down or the journal is unusable (out of service, saying why): only
  // a journal locked by another process, a bad device config or a defect ends it with an error.
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon(loaded, { logger, notifier, faults: faultPointsFromEnv(process.env) });
  } catch (err) {
    // The journal is owned before anything else starts: nothing was sent or written.
    const refusal = describeRefusal(err);
    if (refusal === null) throw err;
    process.stderr.write(`vendd run: ${refusal}`);
    return 1;
  }
  const failure = await Promise.race([stopRequested.then(() => null), daemon.failed]);
  logger.info("stopping");
  await daemon.stop();
  if (failure === null) return 0;
  process.stderr.write(`vendd run: ${failure.message}\n`);
  return 1;
}
