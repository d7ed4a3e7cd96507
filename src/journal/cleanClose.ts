import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { writeFileAtomic } from "../core/atomicFile.js";

/**
 * The clean-close stamp `<journal>.closed`: what the journal file looked like (inode, size, modification and
 * change times, in ns) right after its owner checkpointed and closed it cleanly, with no WAL left beside it.
 * It lets the next start skip `PRAGMA quick_check`, whose cost grows with the file (about a second for a
 * 200 MB journal on the unit: start-up must not be O(sessions)), when nothing has touched the file since it
 * was last verified by its own writer:
 *
 * - the stamp is used once: the start that reads it removes it before the journal is opened for writing,
 *   so a start after a crash (no new stamp) or after any write by anyone (times and size change; a WAL
 *   file with content exists) runs the full quick_check as before;
 * - what it cannot catch: bytes of the file changed at rest without any write through the file system
 *   (storage bit rot). SQLite still refuses a damaged page when it reads it (SQLITE_CORRUPT: the journal
 *   write fails and the unit goes out of service), and `vendd doctor` runs the full integrity_check.
 *
 * Written without fsync: a stamp lost in a power cut only costs the next start its quick_check.
 */
interface Stamp {
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

export function stampPath(journalPath: string): string {
  return `${journalPath}.closed`;
}

function statBig(path: string): Stamp {
  const st = statSync(path, { bigint: true });
  return {
    ino: String(st.ino),
    size: String(st.size),
    mtimeNs: String(st.mtimeNs),
    ctimeNs: String(st.ctimeNs),
  };
}

/** A WAL with content beside the journal: commits not yet in the main file (a crash, or a live writer). */
function walHasContent(journalPath: string): boolean {
  try {
    return statSync(`${journalPath}-wal`).size > 0;
  } catch {
    return false;
  }
}

/**
 * Records that the journal at `journalPath` was just closed cleanly by its owner (call after the connection
 * closed, while the lock is still held). Best effort: a stamp that cannot be written means a full check at
 * the next start.
 */
export function stampCleanClose(journalPath: string): void {
  try {
    if (!existsSync(journalPath) || walHasContent(journalPath)) return;
    writeFileAtomic(stampPath(journalPath), `${JSON.stringify(statBig(journalPath))}\n`, {
      durable: false,
      mode: 0o600,
    });
  } catch {
    // The next start runs the full quick_check.
  }
}

/**
 * Reads and removes the stamp (call with the journal lock held, before the journal is opened for writing);
 * true when the file is exactly as its owner left it at a clean close.
 */
export function takeCleanClose(journalPath: string): boolean {
  const path = stampPath(journalPath);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return false;
  }
  try {
    rmSync(path, { force: true });
  } catch {
    // A stamp that cannot be removed: do not trust it.
    return false;
  }
  try {
    const raw: unknown = JSON.parse(text);
    if (typeof raw !== "object" || raw === null) return false;
    const now = statBig(journalPath);
    const was: Partial<Record<string, unknown>> = { ...raw };
    return (
      !walHasContent(journalPath) &&
      was.ino === now.ino &&
      was.size === now.size &&
      was.mtimeNs === now.mtimeNs &&
      was.ctimeNs === now.ctimeNs
    );
  } catch {
    return false;
  }
}
