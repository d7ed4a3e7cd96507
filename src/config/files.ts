/**
 * Reading config and secrets files. YAML 1.2 is a superset of JSON, so one parser reads both and reports
 * line and column; `JSON.parse` is avoided because its messages quote the offending text.
 *
 * Three rules keep a hostile or broken file harmless:
 * - size: a file above `MAX_FILE_BYTES` is refused from its `fstat` size, before its content is read, and
 *   the read itself stops one byte past the limit (a file that grows, a device, a pipe);
 * - time: the parser's own unique-keys check compares every key with every earlier key of its mapping
 *   (50,000 keys took 10.9 s), so it is off and `duplicateKeys` does the same check with one set per
 *   mapping, in linear time; duplicate keys are still an error;
 * - content: parser messages quote the document (`Not a YAML token: <your secret>`), so a syntax error is
 *   reported as file, line, column and the parser's error code with a fixed hint, never with its message.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import {
  type Document,
  isMap,
  isScalar,
  LineCounter,
  type Pair,
  parseDocument,
  visit,
  type YAMLMap,
} from "yaml";
import { printable } from "../core/printable.js";
import type { ConfigIssue } from "./issues.js";

/** Largest config or secrets file read, bytes (1 MiB; a full example config is about 10 KiB). */
export const MAX_FILE_BYTES = 1_048_576;

/** Syntax errors listed per file at most: binary junk yields one per line. */
export const MAX_SYNTAX_ERRORS = 10;

export type ReadResult =
  | {
      ok: true;
      value: unknown;
      /** Permission bits of the file read (from the same open file, so no race with a swap). */
      mode: number;
      /** The line of the key at `path` (mapping keys from the top), for messages that must not quote it. */
      keyLine: KeyLine;
    }
  | { ok: false; issues: ConfigIssue[] };

/** The 1-based line of the key at `path` in the document, or null when there is none. */
export type KeyLine = (path: readonly string[]) => number | null;

export interface ReadOptions {
  /** The issue path for problems with the file as a whole, e.g. `(config file)` or `secrets.file`. */
  label: string;
  /** Size limit in bytes; default `MAX_FILE_BYTES`. */
  maxBytes?: number;
}

/** Reads and parses a YAML or JSON file; every problem becomes an issue, nothing throws. */
export function readStructuredFile(file: string, opts: ReadOptions): ReadResult {
  const read = readBounded(file, opts.maxBytes ?? MAX_FILE_BYTES);
  if (typeof read === "string") return { ok: false, issues: [{ path: opts.label, message: read }] };
  const parsed = parseStructured(read.text, file, opts);
  return parsed.ok ? { ...parsed, mode: read.mode } : parsed;
}

/**
 * The one loader of every YAML or JSON file vendd reads (unit config and secrets, fleet config and secrets,
 * reporting settings and secrets, and any new one): the size limit, the linear duplicate-key check and
 * messages that never quote the content, as `readStructuredFile`; a failure as one line naming the file.
 */
export function loadStructuredFile(
  file: string,
  what: string,
): { ok: true; value: unknown; keyLine: KeyLine; mode: number } | { ok: false; message: string } {
  const read = readStructuredFile(file, { label: what });
  if (read.ok) return read;
  return { ok: false, message: `${what}: ${read.issues.map((i) => i.message).join("; ")}` };
}

/** The file's text and mode, or what is wrong (naming the file, never its content). */
function readBounded(file: string, maxBytes: number): { text: string; mode: number } | string {
  const shown = printable(file);
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    return `cannot read ${shown}: ${errnoCode(err)}`;
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return `cannot read ${shown}: it is a directory`;
    if (st.size > maxBytes) return tooLarge(shown, `is ${st.size} bytes`, maxBytes);
    const buf = Buffer.allocUnsafe(maxBytes + 1);
    let total = 0;
    for (;;) {
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes)
        return tooLarge(shown, "grew while being read or is not a regular file", maxBytes);
    }
    return { text: buf.toString("utf8", 0, total), mode: st.mode & 0o7777 };
  } catch (err) {
    return `cannot read ${shown}: ${errnoCode(err)}`;
  } finally {
    closeSync(fd);
  }
}

function tooLarge(shown: string, what: string, maxBytes: number): string {
  return `${shown} ${what}; config and secrets files may be at most ${maxBytes} bytes`;
}

/** Parses YAML/JSON text (see `readStructuredFile`). `file` names the source in messages only. */
export function parseStructured(
  text: string,
  file: string,
  opts: Pick<ReadOptions, "label">,
): { ok: true; value: unknown; keyLine: KeyLine } | { ok: false; issues: ConfigIssue[] } {
  const shown = printable(file);
  const fail = (messages: string[]) => ({
    ok: false as const,
    issues: messages.map((message): ConfigIssue => ({ path: opts.label, message })),
  });
  const lineCounter = new LineCounter();
  let doc: Document.Parsed;
  try {
    // stringKeys: every key is a string, as the JavaScript object will have it, so the duplicate check
    // below compares exactly what `toJS` would collapse; a collection or alias as a key is an error.
    doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, stringKeys: true });
  } catch {
    // The composer recurses per nesting level: thousands of `[` exhaust the stack.
    return fail([`${shown}: cannot parse: nested too deeply`]);
  }
  const at = (offset: number, code: string) => {
    const { line, col } = lineCounter.linePos(offset);
    const hint = SYNTAX_HINTS[code];
    return `${shown}: syntax error at line ${line}, column ${col}: ${code}${hint ? ` (${hint})` : ""}`;
  };
  if (doc.errors.length > 0) return fail(capped(doc.errors.map((e) => at(e.pos[0], e.code))));
  const dups = duplicateKeys(doc);
  if (dups.offsets.length > 0) return fail(capped(dups.offsets.map((o) => at(o, "DUPLICATE_KEY"))));
  try {
    // One index per mapping, built on first use: a file of 80,000 unknown keys is located in linear time.
    const indexes = new WeakMap<object, Map<unknown, Pair>>();
    const indexOf = (map: YAMLMap): Map<unknown, Pair> => {
      let index = indexes.get(map);
      if (index === undefined) {
        index = new Map();
        for (const pair of map.items)
          if (isScalar(pair.key) && !index.has(pair.key.value)) index.set(pair.key.value, pair);
        indexes.set(map, index);
      }
      return index;
    };
    const keyLine: KeyLine = (path) => {
      let node: unknown = doc.contents;
      let line: number | null = null;
      for (const segment of path) {
        if (!isMap(node)) return null;
        const pair = indexOf(node).get(segment);
        if (pair === undefined || !isScalar(pair.key)) return null;
        line = lineCounter.linePos(pair.key.range?.[0] ?? 0).line;
        node = pair.value;
      }
      return line;
    };
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }), keyLine };
  } catch {
    // toJS throws on unresolved aliases or alias bombs; its message may name document content.
    return fail([`${shown}: cannot resolve YAML aliases`]);
  }
}

function capped(messages: string[]): string[] {
  if (messages.length <= MAX_SYNTAX_ERRORS) return messages;
  const more = messages.length - MAX_SYNTAX_ERRORS;
  return [...messages.slice(0, MAX_SYNTAX_ERRORS), `... and ${more} more syntax errors`];
}

/**
 * Keys that appear twice in one mapping (YAML requires unique keys; a config where the second value
 * silently wins is a trap). One set per mapping, so the work is linear: `keys` counts the keys checked.
 * Keys are strings here (`stringKeys`), exactly the property names `toJS` produces.
 */
export function duplicateKeys(doc: Document.Parsed): { offsets: number[]; keys: number } {
  const offsets: number[] = [];
  let keys = 0;
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return;
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        keys++;
        const key = pair.key;
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) offsets.push(key.range?.[0] ?? 0);
        else seen.add(key.value);
      }
    },
  });
  return { offsets: offsets.sort((a, b) => a - b), keys };
}

/** Fixed words for the parser's error codes: the parser's own messages quote the document. */
const SYNTAX_HINTS: Readonly<Record<string, string>> = {
  BAD_DQ_ESCAPE: "invalid escape in a double-quoted string",
  BAD_INDENT: "wrong indentation",
  BAD_SCALAR_START: "a plain value cannot start with this character: quote it",
  BLOCK_AS_IMPLICIT_KEY: "a key and its value must be on one line, or the value indented below it",
  BLOCK_IN_FLOW: "block syntax inside [ ] or { }",
  DUPLICATE_KEY: "a key appears twice in the same mapping",
  KEY_OVER_1024_CHARS: "a key longer than 1024 characters, or a missing line break",
  MISSING_CHAR: "a closing quote or bracket, or a ':' after a key, is missing",
  MULTILINE_IMPLICIT_KEY: "a key must fit on one line",
  MULTIPLE_DOCS: "one document per file",
  NON_STRING_KEY: "keys must be plain text",
  TAB_AS_INDENT: "tabs cannot indent YAML: use spaces",
  UNEXPECTED_TOKEN: "unexpected text",
};

/** How a secrets file's permission bits are judged (reliability.md §5: mode 0600 in a 0700 directory). */
export interface SecretsModeCheck {
  /** Group or others may write it: anyone with that access could swap the credentials. Refused. */
  error: string | null;
  /** Group or others may read it (or execute): allowed, but said. */
  warning: string | null;
}

/** Judges the permission bits of a secrets file read by `readStructuredFile`. */
export function secretsModeCheck(file: string, mode: number): SecretsModeCheck {
  const octal = (mode & 0o777).toString(8).padStart(4, "0");
  const shown = printable(file);
  if ((mode & 0o022) !== 0) {
    return {
      error: `secrets file ${shown} has mode ${octal}: group or others may write it; chmod 600 it`,
      warning: null,
    };
  }
  if ((mode & 0o077) !== 0) {
    return {
      error: null,
      warning: `secrets file ${shown} has mode ${octal}; it should be 0600 (chmod 600)`,
    };
  }
  return { error: null, warning: null };
}

function errnoCode(err: unknown): string {
  if (typeof err === "object" && err !== null && "code" in err && typeof err.code === "string")
    return printable(err.code, 32);
  return "read failed";
}
