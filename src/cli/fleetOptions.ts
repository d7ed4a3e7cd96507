/**
 * Options shared by the fleet server's subcommands (`vendd fleet serve|units|approve|revoke|bundle`): their
 * parser, usage text and defaults (the database: `--db`, else `VENDD_FLEET_DB`, else `./fleet.db`).
 */
import { parseArgs } from "node:util";
import { printable } from "../core/printable.js";
import { argsProblem } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS, FLEET_SERVER_OPTIONS } from "./fleetCommands.js";

/** The usage of the fleet server's own commands, rendered from their help lines (fleetCommands.ts). */
const SERVER_WORDS = /^fleet (serve|init|units|approve|revoke|bundle upload)\b/;

export const FLEET_SERVER_USAGE = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => SERVER_WORDS.test(c.words)))}
${serverOptionsText()}`;

/** One fleet server command's own usage (`fleet units`, `fleet approve`...) and the options explained. */
export function fleetCommandUsage(name: string): string {
  return `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith(`fleet ${name}`)))}
${serverOptionsText()}`;
}

function serverOptionsText(): string {
  return `  --config      fleet config (YAML, see config/fleet.example.yaml); the flags below override it
  --db          SQLite file (default ./fleet.db, or $VENDD_FLEET_DB) or postgres://user@host/db
  --listen      where the server listens (default 127.0.0.1:8380)
  --time-zone   IANA zone in which sales days are counted (default $TZ, else UTC)
  --bundle-key  minisign public key (.pub) a bundle must be signed by; repeatable
  --by          the manager's name recorded with the decision or upload (default $USER)
`;
}

export const DEFAULT_FLEET_DB = "./fleet.db";

export class FleetUsageError extends Error {
  override readonly name = "FleetUsageError";
}

export interface FleetArgs {
  /** The fleet config file (`vendd fleet serve --config`). */
  config: string | undefined;
  db: string;
  /** Whether the database came from --db or $VENDD_FLEET_DB (and so overrides the config's `db`). */
  dbGiven: boolean;
  listen: string | undefined;
  timeZone: string | undefined;
  bundleKeys: string[];
  logLevel: string | undefined;
  json: boolean;
  by: string;
  help: boolean;
  positionals: string[];
}

/** Parses a fleet subcommand's arguments; throws FleetUsageError. */
export function parseFleetArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): FleetArgs {
  let parsed: ReturnType<
    typeof parseArgs<{
      args: string[];
      options: typeof FLEET_SERVER_OPTIONS;
      allowPositionals: true;
      strict: true;
    }>
  >;
  try {
    parsed = parseArgs({ args: argv, options: FLEET_SERVER_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new FleetUsageError(argsProblem(err));
  }
  const v = parsed.values;
  const envDb = env.VENDD_FLEET_DB;
  return {
    config: v.config,
    db: v.db ?? (envDb !== undefined && envDb !== "" ? envDb : DEFAULT_FLEET_DB),
    dbGiven: v.db !== undefined || (envDb !== undefined && envDb !== ""),
    listen: v.listen,
    timeZone: v["time-zone"],
    bundleKeys: v["bundle-key"] ?? [],
    logLevel: checkLogLevel(v["log-level"]),
    json: v.json === true,
    by: v.by ?? (env.USER !== undefined && env.USER !== "" ? env.USER : "cli"),
    help: v.help === true,
    positionals: parsed.positionals,
  };
}

/** The log levels `--log-level` (and the fleet config's `logLevel`) take. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

function checkLogLevel(level: string | undefined): string | undefined {
  if (level === undefined || (LOG_LEVELS as readonly string[]).includes(level)) return level;
  throw new FleetUsageError(
    `--log-level ${printable(level, 64)}: not a log level; one of ${LOG_LEVELS.join(", ")}`,
  );
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (host 127.0.0.1). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (m === null || !Number.isInteger(port) || port > 65535)
    throw new FleetUsageError(`--listen ${text}: expected HOST:PORT, e.g. 127.0.0.1:8380`);
  const host = m[1] ?? (m[2] === undefined || m[2] === "" ? "127.0.0.1" : m[2]);
  return { host, port };
}

/** Checks an IANA time zone name; throws FleetUsageError. */
export function checkTimeZone(tz: string): string {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
  } catch {
    throw new FleetUsageError(`--time-zone ${tz}: not a time zone (e.g. Europe/Oslo, UTC)`);
  }
  return tz;
}
