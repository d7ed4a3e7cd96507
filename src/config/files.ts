/**
 * Reading config and secrets files. YAML 1.2 is a superset of JSON, so one parser reads both and reports
 * line and column; `JSON.parse` is avoided because its messages quote the offending text.
 */
import { readFileSync, statSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import type { ConfigIssue } from "./issues.js";

export type ReadResult = { ok: true; value: unknown } | { ok: false; issues: ConfigIssue[] };

export interface ReadOptions {
  /** The issue path for problems with the file as a whole, e.g. `(config file)` or `secrets.file`. */
  label: string;
  /**
   * Whether parser messages may be shown. They never quote the document, but a secrets file gets only the
   * error code and position, so that nothing of its content can reach a console.
   */
  showMessages: boolean;
}

/** Reads and parses a YAML or JSON file; every problem becomes an issue, nothing throws. */
export function readStructuredFile(file: string, opts: ReadOptions): ReadResult {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return { ok: false, issues: [{ path: opts.label, message: `cannot read ${file}: ${errnoCode(err)}` }] };
  }
  return parseStructured(text, file, opts);
}

/** Parses YAML/JSON text (see `readStructuredFile`). */
export function parseStructured(text: string, file: string, opts: ReadOptions): ReadResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const issues = doc.errors.map((e): ConfigIssue => {
      const { line, col } = lineCounter.linePos(e.pos[0]);
      const what = opts.showMessages ? `${e.message} (${e.code})` : e.code;
      return { path: opts.label, message: `${file}: syntax error at line ${line}, column ${col}: ${what}` };
    });
    return { ok: false, issues };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch {
    // toJS throws on unresolved aliases or alias bombs; its message may name document content.
    return { ok: false, issues: [{ path: opts.label, message: `${file}: cannot resolve YAML aliases` }] };
  }
}

/**
 * A warning when a secrets file can be read by group or others (reliability.md §5: mode 0600 in a 0700
 * directory), or null. Never throws.
 */
export function secretsModeWarning(file: string): string | null {
  try {
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) === 0) return null;
    return `secrets file ${file} has mode ${mode.toString(8).padStart(4, "0")}; it should be 0600 (chmod 600)`;
  } catch {
    return null;
  }
}

function errnoCode(err: unknown): string {
  if (typeof err === "object" && err !== null && "code" in err && typeof err.code === "string")
    return err.code;
  return "read failed";
}
