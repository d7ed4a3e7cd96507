import { existsSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations.js";
import type { OwnerRecord } from "./owner.js";
import { classifyJournalError, refuse } from "./problems.js";

/** Largest order sequence: an order id is `<unit ≤ 12>-<epoch 10>-<seq ≤ 8>`, ≤ 32 characters. */
export const MAX_ORDER_SEQ = 99_999_999;

/** What a read-only look at a journal file found. */
export interface JournalState {
  /** False for a missing or empty file (a fresh journal). */
  exists: boolean;
  /** Migrations applied (`PRAGMA user_version`). */
  schema: number;
  /** `meta.journal_id`; null for a fresh journal or one written before ids existed. */
  journalId: string | null;
  /** `meta.order_seq`: order ids allocated so far (0 when none). */
  orderSeq: number;
}

/** A fresh (missing or empty) journal. */
const FRESH: JournalState = { exists: false, schema: 0, journalId: null, orderSeq: 0 };

/**
 * The start check, read-only: it never writes the journal (a `readonly` connection; SQLite may create the
 * `-shm`/`-wal` companions beside a WAL database to read it). Checks, in order: the file opens as SQLite,
 * `PRAGMA quick_check` (or the full `integrity_check` when `thorough`; neither when `cleanClose`: the file is
 * byte for byte as its owner closed it, see cleanClose.ts), the schema is not newer than this vendd, and
 * the order sequence is a sane integer. Throws a `JournalError` (`unusable`) that names the cause; a
 * missing or empty file is a fresh journal.
 */
export function inspectJournal(
  path: string,
  opts: { thorough?: boolean; cleanClose?: boolean } = {},
): JournalState {
  if (!existsSync(path)) return FRESH;
  if (statSync(path).isDirectory()) throw refuse(path, "not a file", `${path} is a directory`);
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 2000 });
    if (opts.thorough || !opts.cleanClose) {
      const check = opts.thorough ? "integrity_check(20)" : "quick_check(20)";
      const rows = (db.pragma(check) as Record<string, unknown>[]).map((r) => String(Object.values(r)[0]));
      if (rows.length !== 1 || rows[0] !== "ok")
        throw refuse(path, "corrupt", `${check.replace(/\(.*/, "")}: ${rows.slice(0, 3).join("; ")}`);
    }
    const schema = Number(db.pragma("user_version", { simple: true }));
    if (schema > MIGRATIONS.length)
      throw refuse(
        path,
        "schema newer",
        `journal schema ${schema} is newer than this vendd (${MIGRATIONS.length})`,
      );
    if (schema === 0) {
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
      if (tables.n === 0) return FRESH;
      throw refuse(path, "corrupt", "tables but no schema version: not a vendd journal");
    }
    return { exists: true, schema, ...readMeta(db, path) };
  } catch (err) {
    throw classifyJournalError(err, path);
  } finally {
    db?.close();
  }
}

function readMeta(db: Database.Database, path: string): { journalId: string | null; orderSeq: number } {
  const rows = db.prepare("SELECT key, value FROM meta WHERE key IN ('order_seq', 'journal_id')").all() as {
    key: string;
    value: string;
  }[];
  const value = (key: string) => rows.find((r) => r.key === key)?.value ?? null;
  const seqText = value("order_seq");
  const orderSeq = seqText === null ? 0 : Number(seqText);
  if (!/^\d{1,9}$/.test(seqText ?? "0") || !Number.isSafeInteger(orderSeq) || orderSeq > MAX_ORDER_SEQ)
    throw refuse(
      path,
      "corrupt",
      `order sequence ${JSON.stringify(seqText)} is not an integer 0-${MAX_ORDER_SEQ}`,
    );
  return { journalId: value("journal_id"), orderSeq };
}

/**
 * Compares the journal with the owner sidecar's high-water mark (owner.ts): a fresh journal where the
 * sidecar says one existed, a different journal, or an order sequence below the mark is "data lost".
 */
export function checkAgainstOwner(path: string, state: JournalState, owner: OwnerRecord | null): void {
  if (owner === null || owner.journalId === null) return;
  if (!state.exists)
    throw refuse(
      path,
      "data lost",
      `the journal is missing or empty, but ${path}.owner records journal ${owner.journalId} with ${owner.orderSeq} order ids`,
    );
  if (state.journalId !== owner.journalId)
    throw refuse(
      path,
      "data lost",
      `this is journal ${state.journalId ?? "(no id)"}, but ${path}.owner records journal ${owner.journalId}`,
    );
  if (state.orderSeq < owner.orderSeq)
    throw refuse(
      path,
      "data lost",
      `the journal's order sequence is ${state.orderSeq}, below the ${owner.orderSeq} recorded in ${path}.owner`,
    );
}
