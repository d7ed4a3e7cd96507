/**
 * `vendd doctor [--config FILE] [--secrets FILE] [--json]`: checks every configured device and the payment
 * service, prints a table (check, status, detail) or one JSON line, and exits 1 when any check failed.
 * Exit codes: 0 every check ok or skipped, 1 a check failed or the config is invalid, 2 usage error.
 */
import { pino } from "pino";
import { ConfigError, DEFAULT_CONFIG_FILE, type LoadedConfig, loadConfig } from "../config/load.js";
import { systemClock } from "../core/clock.js";
import { runDoctor } from "../doctor/checks.js";
import { type DoctorDeps, defaultDoctorDeps } from "../doctor/deps.js";
import { allPassed, type CheckResult, formatJson, formatTable } from "../doctor/run.js";
import { parseOptionsOrExit } from "./cliArgs.js";
import type { CliIo } from "./command.js";
import { renderCommandUsage } from "./commandTable.js";
import { DOCTOR_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "doctor"))}
Checks each configured device and the payment service and prints a table (check, status ok|fail|skip,
detail). Every failure says what to check. Exits 1 when a check failed. Default config: ${DEFAULT_CONFIG_FILE};
on a unit the secrets are usually --secrets /etc/vendd/secrets.yaml (run as root or the vendd user).
Nothing is created or changed at the payment service; the journal is opened read-only.
`;

/** Runs `vendd doctor` with `argv` the arguments after `doctor`; `deps` replace the real devices (tests). */
export async function doctorCommand(
  argv: string[],
  io?: CliIo,
  deps?: (loaded: LoadedConfig) => DoctorDeps,
): Promise<number> {
  const out = io ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const values = parseOptionsOrExit("doctor", argv, DOCTOR_OPTIONS, HELP, out);
  if (typeof values === "number") return values;
  const file = values.config ?? DEFAULT_CONFIG_FILE;
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(file, {
      env: out.env,
      ...(values.secrets === undefined ? {} : { secretsFile: values.secrets }),
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const row: CheckResult = {
      check: "config",
      status: "fail",
      detail: `${err.issues.length} error(s) in ${file}: ${err.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
      ms: 0,
    };
    out.stdout.write(values.json ? formatJson([row]) : formatTable([row]));
    return 1;
  }
  // Driver logs would interleave with the table; the table's details carry what matters.
  const logger = pino({ level: "silent" });
  const results = await runDoctor(loaded, deps ? deps(loaded) : defaultDoctorDeps(systemClock, logger));
  const config: CheckResult = {
    check: "config",
    status: "ok",
    detail: `${file} (board ${loaded.config.board})`,
    ms: 0,
  };
  const rows = [config, ...results];
  out.stdout.write(values.json ? formatJson(rows) : formatTable(rows));
  for (const w of loaded.warnings) out.stderr.write(`warning: ${w}\n`);
  return allPassed(rows) ? 0 : 1;
}
