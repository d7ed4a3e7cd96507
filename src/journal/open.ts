import { dirname } from "node:path";
import { takeCleanClose } from "./cleanClose.js";
import { checkAgainstOwner, inspectJournal, type JournalState } from "./inspect.js";
import { acquireJournalLock, type JournalLock } from "./lock.js";
import { type OwnerRecord, readOwner, writeOwner } from "./owner.js";
import { classifyJournalError, freeBytesAt, MIN_START_FREE_BYTES, refuse } from "./problems.js";

/** A journal file this process owns and has checked, ready to be opened for writing. */
export interface ClaimedJournal {
  readonly path: string;
  readonly lock: JournalLock;
  /** What the read-only start check found. */
  readonly state: JournalState;
  /** This process's owner record, as written to the sidecar. */
  owner: OwnerRecord;
}

export interface ClaimOptions {
  /** Now, ms since the epoch (the owner record's `since` and the order-id epoch). */
  now: number;
  /** Free bytes at a directory (default statfs); injected by tests. */
  freeBytes?: (dir: string) => number | null;
}

/**
 * Everything that happens before a journal is opened for writing, in this order, so that a refusal leaves
 * the journal file untouched and nothing else has happened yet:
 * 1. take the journal lock (lock.ts), or be refused at once (`locked`);
 * 2. record this process in the owner sidecar, keeping the previous high-water mark;
 * 3. the read-only start check (inspect.ts): opens as SQLite, quick_check (skipped when the file is exactly
 *    as its owner closed it cleanly: cleanClose.ts), schema, order sequence;
 * 4. compare with the sidecar's high-water mark ("data lost");
 * 5. free space at the directory ("disk full" before the first write rather than at it).
 * On any refusal the lock is released and a `JournalError` (`locked` or `unusable`) is thrown.
 */
export function claimJournal(path: string, opts: ClaimOptions): ClaimedJournal {
  const lock = acquireJournalLock(path);
  try {
    const previous = readOwnerOrRefuse(path);
    const owner: OwnerRecord = {
      pid: process.pid,
      since: new Date(opts.now).toISOString(),
      journalId: previous?.journalId ?? null,
      orderSeq: previous?.orderSeq ?? 0,
      // Strictly after the previous holder's: order ids stay unique across starts in one second and a
      // clock that went back (a board without RTC before NTP).
      epoch: Math.max(Math.floor(opts.now / 1000), (previous?.epoch ?? 0) + 1),
    };
    // Names the holder for a refused second process at once; made durable by the raise after the open.
    writeOwnerOrRefuse(path, owner, false);
    const state = inspectJournal(path, { cleanClose: takeCleanClose(path) });
    checkAgainstOwner(path, state, previous);
    const free = (opts.freeBytes ?? freeBytesAt)(dirname(path));
    if (free !== null && free < MIN_START_FREE_BYTES)
      throw refuse(path, "disk full", `${free} bytes free at ${dirname(path)}`);
    return { path, lock, state, owner };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Raises the sidecar's high-water mark (at open and after each TRUNCATE checkpoint). */
export function raiseMark(claim: ClaimedJournal, journalId: string, orderSeq: number): void {
  const same = journalId === claim.owner.journalId;
  const next = {
    ...claim.owner,
    journalId,
    orderSeq: same ? Math.max(orderSeq, claim.owner.orderSeq) : orderSeq,
  };
  writeOwnerOrRefuse(claim.path, next);
  claim.owner = next;
}

function readOwnerOrRefuse(path: string): OwnerRecord | null {
  try {
    return readOwner(path);
  } catch (err) {
    throw classifyJournalError(err, path);
  }
}

function writeOwnerOrRefuse(path: string, owner: OwnerRecord, durable = true): void {
  try {
    writeOwner(path, owner, durable);
  } catch (err) {
    throw classifyJournalError(err, path);
  }
}
