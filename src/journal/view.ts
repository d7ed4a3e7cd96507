import Database from "better-sqlite3";
import { DAY_MS } from "../core/days.js";
import type { Minor } from "../core/money.js";
import { isConflict } from "./journal.js";
import { classifyJournalError } from "./problems.js";
import { type SessionDbRow, toSession } from "./rows.js";

/**
 * Read-only views of a journal for operators (`vendd journal`, `vendd doctor`): safe while the daemon runs.
 * The connection is `readonly`, never takes the journal lock and holds no transaction longer than one
 * query (a WAL reader does not block the writer; reliability.md §1.2).
 */
export interface SessionLine {
  /** ms since the epoch. */
  openedAt: number;
  orderId: string;
  item: number;
  price: Minor;
  /** captured | cancelled | denied | unsettled, or "open" while not closed. */
  result: string;
  /** The amount captured (the decision's amount when the result is captured), else null. */
  captured: Minor | null;
  /** Why: the session's reason; for a flagged session, why it was flagged. */
  reason: string;
  review: boolean;
  conflict: boolean;
}

export interface DayTotal {
  /** Local calendar day, YYYY-MM-DD. */
  day: string;
  sessions: number;
  captured: number;
  capturedAmount: Minor;
}

export interface JournalView {
  recent(limit: number): SessionLine[];
  /** Sessions not closed, or closed `unsettled` (what recovery must still resolve), oldest first. */
  unresolved(limit: number): SessionLine[];
  /** Sessions flagged for review, newest first, with the reason. */
  flagged(limit: number): SessionLine[];
  /** Per local day, the last `days` days up to `now` (ms). */
  totals(days: number, now: number): DayTotal[];
  /** What this journal still owes: may it be deleted (a package purge asks; `vendd journal settled`)? */
  owed(): JournalOwed;
  close(): void;
}

/** What a journal holds that exists nowhere else yet. */
export interface JournalOwed {
  /** Sessions not closed, or closed `unsettled` (recovery must still resolve them with the service). */
  unsettled: number;
  /** Outbox events the fleet has not acknowledged (committed); 0 without a fleet. */
  undelivered: number;
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** Whether the journal's schema has the sessions table yet (a fresh file has none). */
function hasSessions(db: Database.Database): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").get() !== undefined
  );
}

const FLAG_REASON =
  "(SELECT json_extract(e.data, '$.reason') FROM events e WHERE e.session_id = s.id AND e.type = 'flagged' ORDER BY e.id DESC LIMIT 1) AS flag_reason";

type Row = SessionDbRow & { flag_reason: string | null };

/**
 * Opens a read-only view of an existing journal file (the caller says so when there is none yet); a file
 * SQLite cannot read is refused like at start (path, cause, next step).
 */
export function openJournalView(path: string): JournalView {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 2000 });
  } catch (err) {
    throw classifyJournalError(err, path);
  }
  const query = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw classifyJournalError(err, path);
    }
  };
  const lines = (where: string, order: string, limit: number): SessionLine[] =>
    query(() => {
      if (!hasSessions(db)) return [];
      const rows = db
        .prepare(`SELECT s.*, ${FLAG_REASON} FROM sessions s ${where} ORDER BY ${order} LIMIT ?`)
        .all(limit) as Row[];
      return rows.map(toLine);
    });
  return {
    recent: (limit) => lines("", "s.opened_at DESC, s.rowid DESC", limit),
    unresolved: (limit) =>
      lines("WHERE s.closed_at IS NULL OR s.result = 'unsettled'", "s.opened_at, s.rowid", limit),
    flagged: (limit) => lines("WHERE s.review = 1", "s.opened_at DESC, s.rowid DESC", limit),
    totals: (days, now) =>
      query(() => {
        if (!hasSessions(db)) return [];
        return db
          .prepare(
            `SELECT date(opened_at / 1000, 'unixepoch', 'localtime') AS day, count(*) AS sessions,
               sum(result = 'captured') AS captured,
               sum(CASE WHEN result = 'captured' THEN coalesce(decision_amount, 0) ELSE 0 END) AS capturedAmount
             FROM sessions WHERE opened_at >= ? GROUP BY day ORDER BY day DESC`,
          )
          .all(now - days * DAY_MS) as DayTotal[];
      }),
    owed: () =>
      query(() => {
        const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
        return {
          unsettled: hasSessions(db)
            ? count("SELECT count(*) AS n FROM sessions WHERE closed_at IS NULL OR result = 'unsettled'")
            : 0,
          undelivered: hasTable(db, "outbox")
            ? count("SELECT count(*) AS n FROM outbox WHERE delivered = 0")
            : 0,
        };
      }),
    close: () => db.close(),
  };
}

function toLine(r: Row): SessionLine {
  const s = toSession(r);
  const captured = s.result === "captured" ? (s.decision?.amount ?? null) : null;
  const why =
    r.flag_reason ?? (s.decision?.review ? s.decision.reason : null) ?? s.reason ?? s.decision?.reason;
  return {
    openedAt: s.openedAt,
    orderId: s.orderId,
    item: s.item,
    price: s.price,
    result: s.closedAt === null ? "open" : (s.result ?? "closed"),
    captured,
    reason: why ?? "",
    review: r.review === 1,
    conflict: isConflict(s),
  };
}
