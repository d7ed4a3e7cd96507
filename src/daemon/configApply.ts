/**
 * `config set|diff|apply|discard` of the technician console. Changes are staged per console connection as
 * (key, value) edits of the config file's YAML document (so comments and layout survive) and validated by
 * the one schema with every error by path. `apply` hands the validated file to the update applier
 * (src/update, `vendd bundle apply --inbox`, run as root by vendd-bundle.path): it is dropped into
 * `<updates.inbox>/local/`, and the applier stages it, swaps it in atomically, restarts the daemon, waits
 * for it to be healthy over the control socket, and commits or rolls back to the last known good config.
 * The daemon itself never writes its config file.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseDocument, parse as parseYaml } from "yaml";
import { readEditValue } from "../config/configValue.js";
import { readStructuredFile } from "../config/files.js";
import { identityFileOf } from "../config/identity.js";
import { mergeLayers } from "../config/layers.js";
import { ConfigError, type ConfigIssue, parseConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { printable } from "../core/printable.js";
import { LOCAL_INBOX } from "../update/apply.js";

export interface ConfigEdit {
  key: string;
  /** The new value (null: none, where the key allows it). */
  value: unknown;
  /** The key is deleted from the file: back to its default. */
  remove?: boolean;
}

/** Exit code of a daemon that stops to be restarted (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75;

const KEY = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)*$/;
const HIDDEN_KEYS = new Set(["console.pinHash"]);

/** Parses `KEY VALUE` of `config set`: the key a dotted path, the value read by the key's type. */
export function parseEdit(key: unknown, value: unknown): ConfigEdit | string {
  if (typeof key !== "string" || key.length > 200 || !KEY.test(key))
    return `not a config key: ${printable(String(key), 60)} (dotted, like console.idleTimeoutMinutes)`;
  if (typeof value !== "string" || value.length > 4096)
    return `${key}: the value must be text up to 4096 characters`;
  const v = readEditValue(key, value);
  if (typeof v === "string") return v;
  return "remove" in v ? { key, value: undefined, remove: true } : { key, value: v.value };
}

/** A value as shown: removals as removals, the PIN hash never. */
function shownValue(key: string, v: unknown, width: number): string {
  if (v === undefined) return "(default)";
  if (v === null) return "(none)";
  return HIDDEN_KEYS.has(key) ? "(set, hidden)" : printable(JSON.stringify(v), width);
}

/** How an edit is shown and audited (the PIN hash never). */
export function describeEdit(e: ConfigEdit): string {
  if (e.remove === true) return `${e.key} removed (back to the default)`;
  if (e.value === null) return `${e.key} = null (removed${HIDDEN_KEYS.has(e.key) ? ": PIN login off" : ""})`;
  return `${e.key} = ${shownValue(e.key, e.value, 80)}`;
}

/** The config file's text with `edits` applied (comments and layout kept). */
export function editedText(file: string, edits: readonly ConfigEdit[]): string {
  const doc = parseDocument(readFileSync(file, "utf8"));
  for (const e of edits) {
    if (e.remove === true) doc.deleteIn(e.key.split("."));
    else doc.setIn(e.key.split("."), e.value);
  }
  return String(doc);
}

/** Every schema error of a config text, by path (secrets are not needed to judge the config). */
export function validateText(text: string, env: NodeJS.ProcessEnv, configFile?: string): ConfigIssue[] {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    return [{ path: "(config file)", message: "the edited file does not parse" }];
  }
  // With an identity file the edited config file is the layer under it (src/config/layers.ts).
  const identity = configFile === undefined ? null : identityFileIn(configFile);
  if (identity !== null) {
    const read = readStructuredFile(identity, { label: "(identity file)" });
    if (!read.ok) return read.issues;
    raw = mergeLayers([
      { name: "fleet", source: configFile ?? "", values: raw },
      { name: "identity", source: identity, values: read.value },
    ]).raw;
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
    return {
      key: e.key,
      from: shownValue(e.key, toJs(old), 60),
      to: e.remove === true ? "(default)" : shownValue(e.key, e.value, 60),
    };
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

/** The identity file of `configFile` when the unit has one (src/config/identity.ts), else null. */
export function identityFileIn(configFile: string): string | null {
  const identity = identityFileOf(configFile);
  return resolve(identity) !== resolve(configFile) && existsSync(identity) ? identity : null;
}
