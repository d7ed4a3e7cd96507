/**
 * `vendd config validate FILE [--secrets FILE]` and `vendd config print FILE [--secrets FILE] [--json]`.
 * Exit codes: 0 valid, 1 invalid (every error listed by path on stderr), 2 usage error. Secret values are
 * never printed: `print` shows the main config only, and no config error quotes a value.
 */
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { ConfigError, loadConfig, toConfigInput } from "../config/load.js";
import { safeUrl } from "../core/safeUrl.js";
import { renderCommandUsage } from "./commandTable.js";
import { CONFIG_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const USAGE = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "config"))}
Secrets come from --secrets FILE, $VENDD_SECRETS_FILE or secrets.file in the config, and from
$VENDD_V10_CLIENT_SECRET, $VENDD_LEGACY_API_KEY and $VENDD_LEGACY_MERCHANT_KEY.
`;

/** Where the command writes and what environment it reads; the process's own by default. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

interface Parsed {
  action: "validate" | "print";
  file: string;
  secrets: string | undefined;
  json: boolean;
}

/** Runs `vendd config ...` with `argv` the arguments after `config`. Resolves the exit code. */
export async function configCommand(argv: string[], io?: CliIo): Promise<number> {
  const out = io ?? { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const parsed = parseCommand(argv);
  if (parsed === "help") {
    out.stdout.write(USAGE);
    return 0;
  }
  if (typeof parsed === "string") {
    out.stderr.write(`vendd config: ${parsed}\n${USAGE}`);
    return 2;
  }
  try {
    // print shows no secret, so it does not need them (a malformed secrets file given is still refused).
    const opts = {
      env: out.env,
      ...(parsed.secrets === undefined ? {} : { secretsFile: parsed.secrets }),
      ...(parsed.action === "print" ? { requireSecrets: false } : {}),
    };
    const loaded = loadConfig(parsed.file, opts);
    if (parsed.action === "validate") {
      out.stdout.write(`ok: ${parsed.file}\n`);
    } else {
      const effective = withoutUserInfo(toConfigInput(loaded.config));
      out.stdout.write(parsed.json ? `${JSON.stringify(effective, null, 2)}\n` : stringify(effective));
    }
    for (const w of loaded.warnings) out.stderr.write(`warning: ${w}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.stderr.write(`${err.message}\n`);
    return 1;
  }
}

/** `value` with every URL's user info (`user:password@`) dropped, as everything vendd prints. */
function withoutUserInfo(value: unknown): unknown {
  if (typeof value === "string")
    return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value) ? safeUrl(value) : value;
  if (Array.isArray(value)) return value.map(withoutUserInfo);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutUserInfo(v)]));
  return value;
}

/** The parsed command, `"help"`, or a usage error message. */
function parseCommand(argv: string[]): Parsed | "help" | string {
  let values: { secrets?: string | undefined; json?: boolean | undefined; help?: boolean | undefined };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: CONFIG_OPTIONS,
      allowPositionals: true,
      strict: true,
    }));
  } catch {
    // parseArgs messages quote the offending argument; a mistyped flag may carry a secret, so say less.
    return "unknown or malformed option";
  }
  if (values.help) return "help";
  const [action, file, ...extra] = positionals;
  if (action !== "validate" && action !== "print") {
    return action === undefined
      ? "missing action: one of validate, print"
      : "unknown action: one of validate, print";
  }
  if (file === undefined || file === "") return `${action}: missing FILE`;
  if (extra.length > 0) return `${action}: takes one FILE`;
  if (values.json && action !== "print") return "--json applies to print only";
  return { action, file, secrets: values.secrets, json: values.json === true };
}
