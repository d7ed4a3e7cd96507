import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../core/atomicFile.js";

/**
 * The owner sidecar `<journal>.owner`: a small JSON file beside the journal, written only by the process that
 * holds the journal lock (lock.ts). It serves two purposes:
 *
 * - **Who holds the journal**: `pid` and `since`, so a second process that is refused the lock can name the
 *   holder ("in use by vendd (PID 1234, since ...)"). It is only read after a refusal, so a stale record
 *   left by a killed process never blocks anything: the OS lock alone decides.
 * - **A high-water mark kept outside the journal**: `journalId` and `orderSeq`, raised when the journal is
 *   opened and after each TRUNCATE checkpoint, and `epoch`, the order-id time component last used (kept
 *   increasing even when the clock is wrong or two starts fall in one second). The start check (open.ts)
 *   refuses a journal whose order sequence is below `orderSeq`, or a missing/empty journal where this
 *   record says one existed ("data lost").
 *
 * What the mark catches: a journal file deleted, emptied or replaced by an older copy, and a WAL lost or
 *   truncated after a start that saw its content (the mark then is above what the main file holds).
 * What it cannot catch: commits made since the last raise that are lost together with the WAL while the
 *   main file still holds everything up to the mark (e.g. sessions since the last checkpoint, WAL truncated
 *   before any restart saw them); a sidecar deleted together with the journal. Raising the mark on every
 *   order id would catch more, at one more fsync per vend; order ids stay unique anyway (their epoch part).
 *
 * Writes are atomic (temporary file, fsync, rename, fsync of the directory); an unparsable record is treated
 * as absent (it loses only this extra protection and is rewritten at the next open).
 */
export interface OwnerRecord {
  /** The holder's process id. */
  pid: number;
  /** When the holder took the journal (ISO 8601). */
  since: string;
  /** `meta.journal_id` of the journal last opened here; null before the first open. */
  journalId: string | null;
  /** The highest `meta.order_seq` known to be durable in that journal. */
  orderSeq: number;
  /** The order-id epoch (seconds) last used; the next open uses a larger one. */
  epoch: number;
}

/** The sidecar's path for a journal. */
export function ownerPath(journalPath: string): string {
  return `${journalPath}.owner`;
}

/** The record, or null when there is none (or it is unparsable). File-system errors other than ENOENT throw. */
export function readOwner(journalPath: string): OwnerRecord | null {
  let text: string;
  try {
    text = readFileSync(ownerPath(journalPath), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    return parseOwner(JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

/** Guards one parsed record; null when any field is missing or of the wrong type. */
export function parseOwner(v: unknown): OwnerRecord | null {
  if (typeof v !== "object" || v === null) return null;
  const r = v as Record<string, unknown>;
  const count = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
  if (!count(r.pid) || typeof r.since !== "string" || !count(r.orderSeq) || !count(r.epoch)) return null;
  if (r.journalId !== null && typeof r.journalId !== "string") return null;
  return { pid: r.pid, since: r.since, journalId: r.journalId, orderSeq: r.orderSeq, epoch: r.epoch };
}

/**
 * Replaces the record atomically; durably (the file and the rename fsynced) unless `durable` is false, for
 * a record that only names the holder and is made durable moments later.
 */
export function writeOwner(journalPath: string, record: OwnerRecord, durable = true): void {
  writeFileAtomic(ownerPath(journalPath), `${JSON.stringify(record)}\n`, { durable, mode: 0o600 });
}

/** "PID 1234, since 2025-01-01T10:00:00.000Z", or what is known when the record is missing. */
export function describeHolder(record: OwnerRecord | null): string {
  return record === null ? "PID unknown: no owner record" : `PID ${record.pid}, since ${record.since}`;
}
