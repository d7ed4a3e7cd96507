/**
 * `vendd config validate FILE [--secrets FILE]`, `vendd config print FILE [--secrets FILE] [--json]
 * [--origin]` and `vendd config split FILE`. Exit codes: 0 valid, 1 invalid (every error listed by path on
 * stderr), 2 usage error. Secret values are never printed: `print` shows the main config only, and no
 * config error quotes a value. The config is layered (src/config/layers.ts): `--origin` says which layer
 * each effective value comes from; `split` moves a one-file config's identity into its identity file.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { readStructuredFile } from "../config/files.js";
import { identityFileOf, identityKeysSet, splitIdentity } from "../config/identity.js";
import { mergeLayers } from "../config/layers.js";
import { ConfigError, loadConfig, type Origin, parseConfig, toConfigInput } from "../config/load.js";
import { isRecord } from "../config/rules.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { printable } from "../core/printable.js";
import { safeUrl } from "../core/safeUrl.js";
import type { CliIo } from "./command.js";
import { renderCommandUsage } from "./commandTable.js";
import { CONFIG_OPTIONS, UNIT_COMMANDS } from "./unitCommands.js";

const USAGE = `${renderCommandUsage(UNIT_COMMANDS.filter((c) => c.command === "config"))}
Secrets come from --secrets FILE, $VENDD_SECRETS_FILE or secrets.file in the config, and from
$VENDD_V10_CLIENT_SECRET, $VENDD_LEGACY_API_KEY and $VENDD_LEGACY_MERCHANT_KEY.
`;

interface Parsed {
  action: "validate" | "print" | "split";
  file: string;
  secrets: string | undefined;
  json: boolean;
  origin: boolean;
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
    if (parsed.action === "split") return split(parsed.file, out);
    // print shows no secret, so it does not need them (a malformed secrets file given is still refused).
    const opts = {
      env: out.env,
      ...(parsed.secrets === undefined ? {} : { secretsFile: parsed.secrets }),
      ...(parsed.action === "print" ? { requireSecrets: false } : {}),
    };
    const loaded = loadConfig(parsed.file, opts);
    if (parsed.action === "validate") {
      out.stdout.write(`ok: ${parsed.file}\n`);
    } else if (parsed.origin) {
      const rows: OriginRow[] = [];
      const originOf = loaded.originOf ?? (() => "default");
      leaves(withoutUserInfo(toConfigInput(loaded.config)), "", (key, value) =>
        rows.push({ key, value, origin: originOf(key) }),
      );
      out.stdout.write(parsed.json ? `${JSON.stringify(rows, null, 2)}\n` : originTable(rows));
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

interface OriginRow {
  key: string;
  value: unknown;
  origin: Origin;
}

/** Calls `fn` for every leaf of `value` (a list is one leaf), with its dotted path. */
function leaves(value: unknown, prefix: string, fn: (key: string, value: unknown) => void): void {
  if (isRecord(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, prefix === "" ? k : `${prefix}.${k}`, fn);
  } else fn(prefix, value);
}

/** One line per value: its layer, its key, its value as JSON. */
function originTable(rows: readonly OriginRow[]): string {
  const width = Math.max(...rows.map((r) => r.origin.length));
  return rows
    .map(
      (r) => `${r.origin.padEnd(width)}  ${r.key} = ${printable(JSON.stringify(r.value) ?? "null", 400)}\n`,
    )
    .join("");
}

/**
 * `vendd config split FILE`: a unit upgraded from one config file gets its identity file. The identity keys
 * FILE sets move to `identity.yaml` next to it (written first), then FILE is rewritten without them; the
 * effective config is the same before and after (checked before anything is written).
 */
function split(file: string, out: CliIo): number {
  const identityFile = identityFileOf(file);
  if (existsSync(identityFile)) {
    out.stderr.write(`vendd config split: ${printable(identityFile)} exists already; nothing changed\n`);
    return 1;
  }
  const read = readStructuredFile(file, { label: "(config file)" });
  if (!read.ok || !isRecord(read.value)) {
    const why = read.ok ? "not a mapping" : read.issues.map((i) => i.message).join("; ");
    out.stderr.write(`vendd config split: ${printable(file)}: ${why}; nothing changed\n`);
    return 1;
  }
  const { identity, rest } = splitIdentity(read.value);
  // The same effective config from the two parts as from the one file, checked before anything is written.
  const effective = (raw: unknown) =>
    JSON.stringify(toConfigInput(parseConfig(raw, undefined, out.env, { requireSecrets: false }).config));
  if (
    effective(read.value) !==
    effective(
      mergeLayers([
        { name: "fleet", source: file, values: rest },
        { name: "identity", source: identityFile, values: identity },
      ]).raw,
    )
  ) {
    out.stderr.write("vendd config split: the two files would not give the same config; nothing changed\n");
    return 1;
  }
  const header = (what: string) =>
    `# ${what} (vendd config split; docs/operators.md "Identity and layers")\n`;
  const mode = read.mode & 0o666;
  writeFileAtomic(
    identityFile,
    `${header("This unit's identity: no bundle or fleet value changes it")}${stringify(identity)}`,
    { mode },
  );
  writeFileAtomic(
    file,
    `${header("Fleet-wide settings: a config bundle replaces this file")}${stringify(rest)}`,
    { mode },
  );
  const n = identityKeysSet(identity).length;
  out.stdout.write(
    `wrote ${printable(identityFile)} (the identity, ${n} values); ${printable(file)} keeps the rest\n`,
  );
  return 0;
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
  let values: {
    secrets?: string | undefined;
    json?: boolean | undefined;
    origin?: boolean | undefined;
    help?: boolean | undefined;
  };
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
  if (action !== "validate" && action !== "print" && action !== "split") {
    return action === undefined
      ? "missing action: one of validate, print, split"
      : "unknown action: one of validate, print, split";
  }
  if (file === undefined || file === "") return `${action}: missing FILE`;
  if (extra.length > 0) return `${action}: takes one FILE`;
  if (values.json && action !== "print") return "--json applies to print only";
  if (values.origin && action !== "print") return "--origin applies to print only";
  return {
    action,
    file,
    secrets: values.secrets,
    json: values.json === true,
    origin: values.origin === true,
  };
}
