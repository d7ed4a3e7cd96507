import { parseArgs } from "node:util";
import { ConfigError, loadConfig, secretValues } from "../config/load.js";
import { faultPointsFromEnv } from "../core/faults.js";
import { createLogger } from "../core/log.js";
import { createNotifier } from "../core/sdnotify.js";
import { startDaemon } from "../daemon/daemon.js";

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
      options: {
        config: { type: "string" },
        secrets: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
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
  const daemon = await startDaemon(loaded, { logger, notifier, faults: faultPointsFromEnv(process.env) });
  await stopRequested;
  logger.info("stopping");
  await daemon.stop();
  return 0;
}
