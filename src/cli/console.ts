/**
 * `vendd console [--socket PATH | --config FILE]`: the technician console on this terminal (src/console).
 * `vendd console hash-pin`: reads a PIN on standard input, prints the scrypt hash for `console.pinHash`.
 * `vendd console verify-audit [--journal PATH | --config FILE]`: checks the audit log's hash chain,
 * reading the journal read-only (safe while the daemon runs). Exit codes: 0 ok, 1 failure or a broken
 * chain, 2 usage error.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig } from "../config/load.js";
import { runConsole } from "../console/session.js";
import { defaultControlSocket } from "../core/control.js";
import { hashPin, PIN_PATTERN } from "../core/pin.js";
import { printable } from "../core/printable.js";
import { verifyAuditLog } from "../journal/consoleStore.js";
import { renderCommandUsage } from "./commandTable.js";
import { CONSOLE_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const HELP = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "console"))}
The technician console, on this terminal (systemctl enable vendd-console@ttyGS0 runs it on a serial
port). Log in with the PIN (console.pinHash) or a technician badge's UID; then 'help' lists commands.
--idle-timeout SECONDS  log out after this long without input (default console.idleTimeoutMinutes)
--socket PATH   the daemon's control socket (default: console.socket, else control.sock next to the
                journal of --config FILE, default ${DEFAULT_CONFIG_FILE})
hash-pin        reads a PIN (4-32 digits) on standard input, prints its hash for console.pinHash
verify-audit    checks the console audit log's hash chain in the journal, read-only; exit 1 on a break
`;

export async function consoleCommand(argv: string[]): Promise<number> {
  let values: {
    socket?: string;
    config?: string;
    journal?: string;
    "idle-timeout"?: string;
    help?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: CONSOLE_OPTIONS,
    }));
  } catch (err) {
    process.stderr.write(`vendd console: ${printable((err as Error).message)}\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [sub, ...extra] = positionals;
  if (extra.length > 0) return usage(`unexpected argument '${printable(extra[0] ?? "", 40)}'`);
  if (sub === "hash-pin") return hashPinCommand();
  if (sub === "verify-audit") return verifyAudit(values);
  if (sub !== undefined) return usage(`unknown subcommand '${printable(sub, 40)}'`);
  if (values.journal !== undefined) return usage("--journal goes with verify-audit");
  let socket = values.socket;
  let idleMs = 300_000;
  if (socket === undefined || values.config !== undefined) {
    const config = configOf(values.config ?? DEFAULT_CONFIG_FILE);
    if (config === null) return 1;
    socket ??= config.console.socket ?? defaultControlSocket(config.journal.path);
    idleMs = config.console.idleTimeoutMinutes * 60_000;
  }
  const idle = values["idle-timeout"];
  if (idle !== undefined) {
    if (!/^\d{1,5}$/.test(idle) || Number(idle) < 1)
      return usage("--idle-timeout is whole seconds, 1 or more");
    idleMs = Number(idle) * 1000;
  }
  return runConsole({ socket, input: process.stdin, output: process.stdout, idleMs });
}

function usage(message: string): number {
  process.stderr.write(`vendd console: ${message}\n${HELP}`);
  return 2;
}

function configOf(file: string) {
  try {
    return loadConfig(file, { requireSecrets: false }).config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`vendd console: invalid configuration ${printable(file)}:\n${err.message}\n`);
    return null;
  }
}

async function readStdin(max: number): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > max) break;
  }
  return text;
}

async function hashPinCommand(): Promise<number> {
  if (process.stdin.isTTY) process.stderr.write("PIN (4-32 digits), then Enter and Ctrl-D: ");
  const pin = (await readStdin(200)).split(/\r?\n/)[0]?.trim() ?? "";
  if (!PIN_PATTERN.test(pin)) {
    process.stderr.write("vendd console hash-pin: a PIN is 4 to 32 digits\n");
    return 1;
  }
  process.stdout.write(`${await hashPin(pin)}\n`);
  return 0;
}

function verifyAudit(values: { config?: string; journal?: string; socket?: string }): number {
  if (values.socket !== undefined)
    return usage("verify-audit reads the journal: --journal PATH or --config FILE");
  if (values.config !== undefined && values.journal !== undefined)
    return usage("give --config or --journal, not both");
  let path = values.journal;
  if (path === undefined) {
    const config = configOf(values.config ?? DEFAULT_CONFIG_FILE);
    if (config === null) return 1;
    path = config.journal.path;
  }
  if (!existsSync(path)) {
    process.stderr.write(`vendd console verify-audit: no journal at ${printable(path)}\n`);
    return 1;
  }
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 2000 });
  try {
    const v = verifyAuditLog(db);
    if (v.ok) {
      process.stdout.write(`audit log intact: ${v.detail}\n`);
      return 0;
    }
    process.stdout.write(`audit log BROKEN: ${v.detail}\n`);
    return 1;
  } finally {
    db.close();
  }
}
