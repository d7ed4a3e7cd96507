import Database from "better-sqlite3";
import { createPrivateFile } from "../core/atomicFile.js";
import { describeHolder, readOwner } from "./owner.js";
import { classifyJournalError, errorCode, refuse } from "./problems.js";

/**
 * Exclusive ownership of a journal for the life of a process: exactly one process may write a journal (a
 * second daemon's start-up recovery would settle the first one's in-flight vend; reliability.md §1.2).
 *
 * Why this mechanism: the lock is a sidecar `<journal>.lock`, an SQLite database opened with better-sqlite3
 * in `PRAGMA locking_mode=EXCLUSIVE` and taken with `BEGIN EXCLUSIVE`, so SQLite holds a POSIX write lock on
 * it until the connection closes.
 * - The kernel releases the lock when the process dies, however it dies (the crash tests SIGKILL the daemon
 *   hundreds of times and restart it at once): a stale lock file never blocks a restart, and there is no
 *   PID-file guessing.
 * - SQLite's own in-process lock table makes a second open in the same process conflict too (POSIX locks
 *   alone would not: they are per process).
 * - Node has no `flock`; this needs no native module beyond the one the journal already uses.
 * - The journal itself stays in normal locking mode, so `vendd journal` and `vendd doctor` can read it
 *   read-only while the daemon runs (`locking_mode=EXCLUSIVE` on the journal would shut them out).
 *
 * A refused process learns the holder from the owner sidecar (owner.ts), written right after the lock is
 * taken. It waits for nothing (busy timeout 0): the refusal is immediate.
 */
export interface JournalLock {
  readonly journalPath: string;
  /** Releases the lock (idempotent). */
  release(): void;
}

/** The lock file of a journal. */
export function lockPath(journalPath: string): string {
  return `${journalPath}.lock`;
}

/**
 * Takes the journal's lock or throws a `JournalError`: code `locked` ("journal PATH is in use by vendd (PID
 * 1234, since ...)") when another process, or another connection of this one, holds it; code `unusable`
 * when the lock file cannot be created (missing or read-only directory, disk full...).
 */
export function acquireJournalLock(journalPath: string): JournalLock {
  let db: Database.Database | null = null;
  try {
    createPrivateFile(lockPath(journalPath));
    db = new Database(lockPath(journalPath), { timeout: 0 });
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = MEMORY");
    db.exec("BEGIN EXCLUSIVE; COMMIT;");
  } catch (err) {
    db?.close();
    if (errorCode(err) === "SQLITE_BUSY") throw heldBy(journalPath, err);
    throw classifyJournalError(err, journalPath);
  }
  const conn = db;
  return {
    journalPath,
    release() {
      if (conn.open) conn.close();
    },
  };
}

function heldBy(journalPath: string, err: unknown) {
  let holder: string;
  try {
    holder = describeHolder(readOwner(journalPath));
  } catch {
    holder = "PID unknown: owner record unreadable";
  }
  return refuse(journalPath, "in use", `vendd (${holder})`, err);
}
