/**
 * `config set|diff|apply|discard` of the technician console, and the apply's other half at the next start.
 * Changes are staged per console connection as (key, value) edits of the config file's YAML document (so
 * comments and layout survive), validated by the one schema with every error by path. Apply, when valid:
 *   1. the current file is kept as `<file>.last-good`, and a marker `<file>.apply.json` names the version;
 *   2. the new file replaces the config atomically (src/core/atomicFile.ts);
 *   3. the daemon stops cleanly and exits 75 (vendd.service has Restart=always).
 * At the next start (`vendd run`): a marker with a config that does not load restores the last good file
 * at once; otherwise the daemon must be in service within `console.applyHealthSeconds`: then the version
 * is recorded in the journal (meta `config_version`) and the audit log, else the last good file is
 * restored and the daemon restarts again.
 */
import { existsSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { parseDocument, parse as parseYaml } from "yaml";
import { ConfigError, type ConfigIssue, parseConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { printable } from "../core/printable.js";

export interface ConfigEdit {
  key: string;
  value: unknown;
}

export interface PendingApply {
  version: number;
  at: number;
}

/** Exit code of a daemon that stops to be restarted (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75;

const KEY = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)*$/;
const HIDDEN_KEYS = new Set(["console.pinHash"]);

export const lastGoodFile = (file: string) => `${file}.last-good`;
export const markerFile = (file: string) => `${file}.apply.json`;

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

/**
 * Writes the validated new config (steps 1 and 2 above); the caller then restarts the daemon.
 * @returns the marker written.
 */
export function writeApply(file: string, text: string, version: number, now: number): PendingApply {
  const mode = statSync(file).mode & 0o777;
  writeFileAtomic(lastGoodFile(file), readFileSync(file), { mode });
  const marker: PendingApply = { version, at: now };
  writeFileAtomic(markerFile(file), `${JSON.stringify(marker)}\n`, { mode: 0o600 });
  writeFileAtomic(file, text, { mode });
  return marker;
}

/** The marker of an apply waiting for its health check, or null. */
export function readPendingApply(file: string): PendingApply | null {
  const path = markerFile(file);
  if (!existsSync(path)) return null;
  try {
    const x: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (
      typeof x === "object" &&
      x !== null &&
      "version" in x &&
      "at" in x &&
      typeof x.version === "number" &&
      typeof x.at === "number"
    )
      return { version: x.version, at: x.at };
  } catch {
    // A torn or foreign marker: treated as an apply to judge (version unknown).
  }
  return { version: -1, at: 0 };
}

/** Restores the last good config and removes the marker (rollback). */
export function rollBack(file: string): void {
  const good = lastGoodFile(file);
  if (existsSync(good)) {
    const mode = statSync(file).mode & 0o777;
    writeFileAtomic(file, readFileSync(good), { mode });
  }
  clearMarker(file);
}

/** The apply is final: the marker goes (the last good copy stays, for the next apply to replace). */
export function clearMarker(file: string): void {
  try {
    unlinkSync(markerFile(file));
  } catch {
    // Already gone.
  }
}
