/**
 * `config set|diff|apply|discard` of the technician console. Changes are staged per console connection as
 * (key, value) edits of the config file's YAML document (so comments and layout survive) and validated by
 * the one schema with every error by path. `apply` hands the validated file to the update applier
 * (src/update, `vendd bundle apply --inbox`, run as root by vendd-bundle.path): it is dropped into
 * `<updates.inbox>/local/`, and the applier stages it, swaps it in atomically, restarts the daemon, waits
 * for it to be healthy over the control socket, and commits or rolls back to the last known good config.
 * The daemon itself never writes its config file.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseDocument, parse as parseYaml } from "yaml";
import { ConfigError, type ConfigIssue, parseConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { printable } from "../core/printable.js";
import { LOCAL_INBOX } from "../update/apply.js";

export interface ConfigEdit {
  key: string;
  value: unknown;
}

/** Exit code of a daemon that stops to be restarted (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75;

const KEY = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)*$/;
const HIDDEN_KEYS = new Set(["console.pinHash"]);

/** Parses `KEY VALUE` of `config set`: the key a dotted path, the value a YAML scalar or flow value. */
export function parseEdit(key: unknown, value: unknown): ConfigEdit | string {
  if (typeof key !== "string" || key.length > 200 || !KEY.test(key))
    return `not a config key: ${printable(String(key), 60)} (dotted, like console.idleTimeoutMinutes)`;
  if (typeof value !== "string" || value.length > 4096)
    return `${key}: the value must be text up to 4096 characters`;
  try {
    return { key, value: parseYaml(value, { maxAliasCount: 0 }) as unknown };
  } catch {
    return { key, value };
  }
}

/** How an edit is shown and audited (the PIN hash never). */
export function describeEdit(e: ConfigEdit): string {
  return HIDDEN_KEYS.has(e.key)
    ? `${e.key} = (hidden)`
    : `${e.key} = ${printable(JSON.stringify(e.value), 80)}`;
}

/** The config file's text with `edits` applied (comments and layout kept). */
export function editedText(file: string, edits: readonly ConfigEdit[]): string {
  const doc = parseDocument(readFileSync(file, "utf8"));
  for (const e of edits) doc.setIn(e.key.split("."), e.value);
  return String(doc);
}

/** Every schema error of a config text, by path (secrets are not needed to judge the config). */
export function validateText(text: string, env: NodeJS.ProcessEnv): ConfigIssue[] {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    return [{ path: "(config file)", message: "the edited file does not parse" }];
  }
  try {
    parseConfig(raw, undefined, env, { requireSecrets: false });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
}

/** Old and new values of each staged key. */
export function diffEdits(
  file: string,
  edits: readonly ConfigEdit[],
): { key: string; from: string; to: string }[] {
  const doc = parseDocument(readFileSync(file, "utf8"));
  const seen = new Map<string, ConfigEdit>();
  for (const e of edits) seen.set(e.key, e);
  return [...seen.values()].map((e) => {
    const old: unknown = doc.getIn(e.key.split("."));
    const shown = (v: unknown) =>
      HIDDEN_KEYS.has(e.key)
        ? "(hidden)"
        : v === undefined
          ? "(default)"
          : printable(JSON.stringify(toJs(v)), 60);
    return { key: e.key, from: shown(old), to: shown(e.value) };
  });
}

function toJs(v: unknown): unknown {
  return typeof v === "object" && v !== null && "toJSON" in v && typeof v.toJSON === "function"
    ? (v.toJSON as () => unknown)()
    : v;
}

/** Drops a validated config for the applier; returns the file written. */
export function dropForApplier(inbox: string, text: string, now: number): string {
  const dir = join(inbox, LOCAL_INBOX);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `console-${now}.yaml`);
  writeFileAtomic(file, text, { mode: 0o600 });
  return file;
}
