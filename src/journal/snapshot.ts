import Database from "better-sqlite3";
import type { SessionRow, VendOutcome } from "./journal.js";
import { type SessionDbRow, toSession } from "./rows.js";

/** A journaled vend, with the session it belongs to. */
export interface VendView {
  id: number;
  sessionId: string;
  item: number;
  price: number;
  outcome: VendOutcome | null;
}

/** A journaled payment intent (what was, or was about to be, sent). */
export interface IntentView {
  sessionId: string;
  op: string;
  orderId: string;
  /** The idempotency key stored with the intent before it was sent. */
  key: string;
  state: string;
  paymentId: string | null;
  amount: number;
}

/** Everything the consistency checker (src/check) reads from a journal, in one snapshot. */
export interface JournalSnapshot {
  sessions: SessionRow[];
  vends: VendView[];
  intents: IntentView[];
  integrity: string;
}

/**
 * Read-only access to the live journal of a unit (under test, or for the consistency checker). It never
 * writes: the daemon is the only writer (reliability.md §1.2); a read-only connection on a WAL database is a
 * reader like any other. Here, beside the journal's private row mapping, so readers outside the journal
 * never see its SQL rows.
 */
function withJournal<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * Reads the whole journal (sessions, vends, intents) and runs `PRAGMA integrity_check` (unless
 * `integrity: false`, for a cheap poll); empty when fresh.
 */
export function readJournal(path: string, opts: { integrity?: boolean } = {}): JournalSnapshot {
  return withJournal(path, (db) => {
    const integrity =
      opts.integrity === false ? "not checked" : String(db.pragma("integrity_check", { simple: true }));
    if (!hasTable(db, "sessions")) return { sessions: [], vends: [], intents: [], integrity };
    const sessions = (
      db.prepare("SELECT * FROM sessions ORDER BY opened_at, rowid").all() as SessionDbRow[]
    ).map(toSession);
    const vends = (
      db.prepare("SELECT id, session_id, item, price, outcome FROM vends ORDER BY id").all() as DbVend[]
    ).map((v) => ({
      id: v.id,
      sessionId: v.session_id,
      item: v.item,
      price: v.price,
      outcome: v.outcome as VendOutcome | null,
    }));
    const intents = (
      db
        .prepare(
          "SELECT session_id, op, order_id, idempotency_key, state, payment_id, amount FROM intents ORDER BY id",
        )
        .all() as DbIntent[]
    ).map((i) => ({
      sessionId: i.session_id,
      op: i.op,
      orderId: i.order_id,
      key: i.idempotency_key,
      state: i.state,
      paymentId: i.payment_id,
      amount: i.amount,
    }));
    return { sessions, vends, intents, integrity };
  });
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

interface DbVend {
  id: number;
  session_id: string;
  item: number;
  price: number;
  outcome: string | null;
}

interface DbIntent {
  session_id: string;
  op: string;
  order_id: string;
  idempotency_key: string;
  state: string;
  payment_id: string | null;
  amount: number;
}
