import {
  accessSync,
  closeSync,
  constants,
  openSync,
  readSync,
  type Stats,
  statfsSync,
  statSync,
} from "node:fs";
import { dirname } from "node:path";
import { wrongBuild } from "../core/nativeBuild.js";
import { type JournalCause, JournalError, type JournalProblem } from "./journal.js";

/** Below this much free space at the journal's directory a start is refused as "disk full", bytes. */
export const MIN_START_FREE_BYTES = 1024 * 1024;

const RECOVERING = 'docs/operators.md, "Recovering a unit"';

/** The first bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

/** The next step for each cause: one or two sentences an operator can act on. */
export function nextStepFor(cause: JournalCause, path: string): string {
  const dir = dirname(path);
  switch (cause) {
    case "corrupt":
      return `Stop vendd and keep a copy of the journal files, then restore the journal from a backup or move it aside and start fresh, and settle the payments the service still holds (${RECOVERING}).`;
    case "not a journal":
      return `${path} does not start like an SQLite database (nothing was changed). If the path is wrong (another file given as --journal or journal.path), fix it; if it is this unit's journal, it is damaged: keep a copy of the journal files, then restore it from a backup or move it aside and start fresh (${RECOVERING}).`;
    case "schema newer":
      return `This journal was written by a newer vendd: install that version again, or move the journal aside and start fresh (${RECOVERING}).`;
    case "data lost":
      return `Sessions this unit recorded are missing from the journal (deleted, truncated or restored from an older copy): settle the payments the service still holds, then move the journal and its sidecar files aside to start fresh (${RECOVERING}).`;
    case "disk full":
      return `Free space on the file system that holds ${dir} (old logs: journalctl --vacuum-size=50M), then restart vendd (${RECOVERING}).`;
    case "not writable":
      return `Make ${dir} and the journal files writable for the user vendd runs as (check for a read-only mount, ownership, StateDirectory=vendd), then restart vendd (${RECOVERING}).`;
    case "not a directory":
      return `journal.path must lie inside a directory, and part of ${dir} is a file: fix journal.path in the config (${RECOVERING}).`;
    case "no directory":
      return `Create ${dir} (StateDirectory=vendd in the systemd unit does) or fix journal.path in the config.`;
    case "not a file":
      return `journal.path names a directory: point it at a file, for example ${path}/journal.db.`;
    case "i/o error":
      return `Check the storage (dmesg: a failing SD card or USB disk), keep a copy of the journal files, then restart vendd (${RECOVERING}).`;
    case "wrong build":
      return `This board runs ${process.arch} with Node.js ${process.version}: install the vendd release built for it (docs/board.md); the journal is not touched.`;
    case "in use":
      return "Only one vendd may use a journal: stop the other one (systemctl stop vendd) or give this one its own journal.path.";
  }
}

/** A problem with its next step filled in. */
export function journalProblem(path: string, cause: JournalCause, detail: string): JournalProblem {
  return { path, cause, detail, nextStep: nextStepFor(cause, path) };
}

/** The `unusable` (or `locked`) error for a problem. */
export function refuse(
  path: string,
  cause: JournalCause,
  detail: string,
  underlying?: unknown,
): JournalError {
  return JournalError.unusable(journalProblem(path, cause, detail), underlying);
}

/** The error code of a SQLite (`SQLITE_FULL`, extended codes too) or Node file-system (`ENOSPC`) error. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * The one mapping from what SQLite or the file system said while the journal was being checked or opened to
 * a {@link JournalCause}. Codes that do not say why (SQLITE_CANTOPEN, SQLITE_IOERR: a full disk often shows
 * as an I/O error on the `-shm` file) are explained by looking at the path: its directories, permissions
 * and free space. A `JournalError` passes through unchanged.
 */
export function classifyJournalError(err: unknown, path: string, freeBytes = freeBytesAt): JournalError {
  if (err instanceof JournalError) return err;
  // SQLite's native module built for another CPU or Node.js: not a storage fault.
  const wrong = wrongBuild(err);
  if (wrong !== null) return refuse(path, "wrong build", wrong, err);
  const code = errorCode(err) ?? "";
  const message = err instanceof Error ? err.message : String(err);
  const detail = code === "" || message.startsWith(code) ? message : `${code}: ${message}`;
  if (code === "SQLITE_NOTADB" && !startsLikeSqlite(path)) return refuse(path, "not a journal", detail, err);
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")
    return refuse(path, "corrupt", detail, err);
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT")
    return refuse(path, "disk full", detail, err);
  // The `-shm` index could not be extended: what a full disk looks like at the first read of a WAL journal.
  if (code === "SQLITE_IOERR_SHMSIZE")
    return refuse(path, "disk full", `${detail} (the ${path}-shm file could not be extended)`, err);
  if (code === "SQLITE_BUSY" || code.startsWith("SQLITE_LOCKED"))
    return refuse(path, "in use", `another program (${detail})`, err);
  const probed = probePath(path, freeBytes);
  if (probed !== null) return refuse(path, probed.cause, `${probed.detail}; ${detail}`, err);
  if (code === "ENOTDIR") return refuse(path, "not a directory", detail, err);
  if (code.startsWith("SQLITE_READONLY") || code === "EROFS" || code === "EACCES" || code === "EPERM")
    return refuse(path, "not writable", detail, err);
  return refuse(path, "i/o error", detail, err);
}

/** Whether the file at `path` begins with SQLite's header (a damaged journal does; another file does not). */
function startsLikeSqlite(path: string): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(SQLITE_HEADER.length);
    readSync(fd, head, 0, head.length, 0);
    return head.equals(SQLITE_HEADER);
  } catch {
    return true;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Explains a failure from the path alone: a directory where the file should be, a file where a directory
 * should be, a missing directory, no write permission (or a read-only mount), no free space. Null when the
 * path looks usable.
 */
export function probePath(
  path: string,
  freeBytes: (dir: string) => number | null = freeBytesAt,
): { cause: JournalCause; detail: string } | null {
  const dir = dirname(path);
  const self = statOrCode(path);
  if (typeof self !== "string" && self.isDirectory())
    return { cause: "not a file", detail: `${path} is a directory` };
  for (let d = dir; ; d = dirname(d)) {
    const st = statOrCode(d);
    if (typeof st !== "string") {
      if (!st.isDirectory()) return { cause: "not a directory", detail: `${d} is a file, not a directory` };
      if (d !== dir) return { cause: "no directory", detail: `${dir} does not exist` };
      break;
    }
    if (st === "ENOTDIR") continue;
    if (st !== "ENOENT") return { cause: "not writable", detail: `cannot look at ${d} (${st})` };
    if (dirname(d) === d) return { cause: "no directory", detail: `${dir} does not exist` };
  }
  const denied = accessCode(dir, constants.W_OK | constants.X_OK);
  if (denied !== null) return { cause: "not writable", detail: `${dir} is not writable (${denied})` };
  if (typeof self !== "string") {
    const file = accessCode(path, constants.W_OK | constants.R_OK);
    if (file !== null) return { cause: "not writable", detail: `${path} is not writable (${file})` };
  }
  const free = freeBytes(dir);
  if (free !== null && free < MIN_START_FREE_BYTES)
    return { cause: "disk full", detail: `${free} bytes free at ${dir}` };
  return null;
}

/** Free bytes for an unprivileged writer at `dir`, or null when unknown. */
export function freeBytesAt(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

function statOrCode(path: string): Stats | string {
  try {
    return statSync(path);
  } catch (err) {
    return errorCode(err) ?? "error";
  }
}

function accessCode(path: string, mode: number): string | null {
  try {
    accessSync(path, mode);
    return null;
  } catch (err) {
    return errorCode(err) ?? "error";
  }
}

/**
 * A refusal (`locked` or `unusable`) for an operator's terminal: path, cause and next step, one per line.
 * Null for any other error.
 */
export function describeRefusal(err: unknown): string | null {
  if (!(err instanceof JournalError) || err.problem === undefined) return null;
  const p = err.problem;
  if (err.code === "locked")
    return `journal ${p.path} is in use by ${p.detail}\n  next step: ${p.nextStep}\n`;
  return [
    "the journal cannot be used; it was left untouched",
    `  journal:   ${p.path}`,
    `  cause:     ${p.cause} (${p.detail})`,
    `  next step: ${p.nextStep}`,
    "",
  ].join("\n");
}
