import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";
import type { Minor } from "../core/money.js";
import type { Intent, SessionRow } from "./journal.js";
import { JournalError } from "./journal.js";
import { MIGRATIONS } from "./migrations.js";
import { type IntentDbRow, type SessionDbRow, toIntent, toSession } from "./rows.js";

/**
 * The technician console's tables in the journal (migration 4): login attempts, which survive restarts so
 * a power cycle does not reset the lockout count, and the append-only, hash-chained audit log. Also the
 * read queries the console's `sales` and `journal SESSION` commands need, and the config version kept in
 * the journal's meta table. The daemon is the only writer.
 */

export type LoginMethod = "pin" | "badge";

export interface LoginAttempt {
  id: number;
  at: number;
  method: LoginMethod;
  /** `pending` = recorded, not yet judged: counts as a failure (the daemon may have died while checking). */
  state: "pending" | "ok" | "failed";
}

export interface AuditRow {
  id: number;
  at: number;
  /** `PIN` or `badge <name>`, or `-` before a login. */
  who: string;
  command: string;
  outcome: string;
  prevHash: string;
  hash: string;
}

export interface AuditVerification {
  ok: boolean;
  rows: number;
  /** The first row whose hash or link does not match, when broken. */
  brokenAt: number | null;
  detail: string;
}

export interface SalesLine {
  /** Local day, YYYY-MM-DD. */
  day: string;
  item: number;
  count: number;
  total: Minor;
}

export interface SessionDetail {
  session: SessionRow;
  intents: Intent[];
  events: { at: number; type: string; data: string | null }[];
}

/** prev_hash of the first audit row. */
export const AUDIT_GENESIS = "0".repeat(64);

/** The canonical text a row's hash covers (everything but the hashes, in a fixed order). */
export function canonicalAuditRow(r: Omit<AuditRow, "prevHash" | "hash">): string {
  return JSON.stringify([r.id, r.at, r.who, r.command, r.outcome]);
}

export function auditHash(prevHash: string, r: Omit<AuditRow, "prevHash" | "hash">): string {
  return createHash("sha256")
    .update(prevHash + canonicalAuditRow(r))
    .digest("hex");
}

interface AuditDbRow {
  id: number;
  at: number;
  who: string;
  command: string;
  outcome: string;
  prev_hash: string;
  hash: string;
}

const toAudit = (r: AuditDbRow): AuditRow => ({
  id: r.id,
  at: r.at,
  who: r.who,
  command: r.command,
  outcome: r.outcome,
  prevHash: r.prev_hash,
  hash: r.hash,
});

/** The audit log's head kept in the meta table (migration "audit_head"): its row count and last hash. */
export interface AuditHead {
  count: number;
  hash: string;
}

/** The meta key of the audit head. */
export const AUDIT_HEAD_KEY = "audit_head";

/** The journal schema version from which every journal has an audit head. */
const HEAD_SCHEMA = MIGRATIONS.findIndex((m) => m.includes("'audit_head'")) + 1;

/**
 * Walks the chain: every row links to its predecessor's hash and its own hash matches its content; then
 * the rows end where the head says (`head` undefined: a journal older than the head, not checked; null:
 * the head is missing where it must be).
 */
export function verifyAuditRows(rows: Iterable<AuditRow>, head?: AuditHead | null): AuditVerification {
  let prev = AUDIT_GENESIS;
  let count = 0;
  for (const r of rows) {
    count++;
    if (r.prevHash !== prev)
      return {
        ok: false,
        rows: count,
        brokenAt: r.id,
        detail: `row ${r.id} does not link to the row before`,
      };
    if (auditHash(prev, r) !== r.hash)
      return {
        ok: false,
        rows: count,
        brokenAt: r.id,
        detail: `row ${r.id} was changed after it was written`,
      };
    prev = r.hash;
  }
  if (head === null)
    return {
      ok: false,
      rows: count,
      brokenAt: null,
      detail: "the audit head record (meta audit_head) is gone",
    };
  if (head !== undefined && head.count > count)
    return {
      ok: false,
      rows: count,
      brokenAt: count + 1,
      detail: `${head.count - count} row(s) missing from the end: the head records ${head.count}, the log holds ${count}`,
    };
  if (head !== undefined && (head.count !== count || head.hash !== prev))
    return {
      ok: false,
      rows: count,
      brokenAt: count,
      detail: `the log does not end where its head says (${head.count} rows)`,
    };
  return { ok: true, rows: count, brokenAt: null, detail: `${count} rows, chain intact` };
}

/** Reads the audit chain of a journal connection (read-only use: verify-audit on a file). */
export function readAuditRows(db: Database.Database): AuditRow[] {
  const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'console_audit'").get();
  if (has === undefined) return [];
  return (db.prepare("SELECT * FROM console_audit ORDER BY id").all() as AuditDbRow[]).map(toAudit);
}

/** The audit head of a journal: undefined for a schema older than the head, null when it is missing. */
export function readAuditHead(db: Database.Database): AuditHead | null | undefined {
  if (Number(db.pragma("user_version", { simple: true })) < HEAD_SCHEMA) return undefined;
  const v = db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(AUDIT_HEAD_KEY);
  if (typeof v !== "string") return null;
  try {
    const h = JSON.parse(v) as unknown;
    if (typeof h === "object" && h !== null && "count" in h && "hash" in h) {
      const { count, hash } = h;
      if (typeof count === "number" && Number.isSafeInteger(count) && typeof hash === "string")
        return { count, hash };
    }
  } catch {
    // Not JSON: as good as missing.
  }
  return null;
}

/** Verifies a journal's audit chain against its head. */
export function verifyAuditLog(db: Database.Database): AuditVerification {
  return verifyAuditRows(readAuditRows(db), readAuditHead(db));
}

export class ConsoleStore {
  private readonly s;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {
    this.s = {
      attempt: db.prepare(
        "INSERT INTO console_attempts (at, method, state) VALUES (?, ?, 'pending') RETURNING id",
      ),
      judge: db.prepare("UPDATE console_attempts SET state = ? WHERE id = ? AND state = 'pending'"),
      sinceOk: db.prepare(
        "SELECT id, at, method, state FROM console_attempts WHERE id > coalesce((SELECT max(id) FROM console_attempts WHERE state = 'ok'), 0) ORDER BY id",
      ),
      last: db.prepare("SELECT id, hash FROM console_audit ORDER BY id DESC LIMIT 1"),
      append: db.prepare(
        "INSERT INTO console_audit (id, at, who, command, outcome, prev_hash, hash) VALUES (@id, @at, @who, @command, @outcome, @prevHash, @hash)",
      ),
      audit: db.prepare("SELECT * FROM console_audit ORDER BY id DESC LIMIT ?"),
      meta: db.prepare("SELECT value FROM meta WHERE key = ?").pluck(),
      setMeta: db.prepare(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ),
      sales: db.prepare(
        `SELECT date(v.approved_at / 1000, 'unixepoch', 'localtime') AS day, v.item AS item,
           count(*) AS count, sum(v.price) AS total
         FROM vends v JOIN sessions s ON s.id = v.session_id
         WHERE v.outcome = 'success' AND s.result = 'captured'
           AND date(v.approved_at / 1000, 'unixepoch', 'localtime') BETWEEN @from AND @to
         GROUP BY day, v.item ORDER BY day, v.item`,
      ),
      session: db.prepare("SELECT * FROM sessions WHERE id = ? OR order_id = ?"),
      intents: db.prepare("SELECT * FROM intents WHERE session_id = ? ORDER BY id"),
      events: db.prepare("SELECT at, type, data FROM events WHERE session_id = ? ORDER BY id LIMIT 500"),
    };
  }

  private write<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw new JournalError("io", `journal write failed (${what}): ${(e as Error).message}`, { cause: e });
    }
  }

  /** Commits a pending attempt before the secret is checked; returns its id. */
  recordAttempt(method: LoginMethod): number {
    return this.write("login attempt", () => {
      const row = this.s.attempt.get(this.clock.now(), method) as { id: number };
      return row.id;
    });
  }

  judgeAttempt(id: number, ok: boolean): void {
    this.write("login attempt", () => this.s.judge.run(ok ? "ok" : "failed", id));
  }

  /** Attempts since the last successful login (pending ones count as failures), oldest first. */
  attemptsSinceSuccess(): LoginAttempt[] {
    return this.s.sinceOk.all() as LoginAttempt[];
  }

  /** Appends one audit row, chained to the last one. */
  audit(who: string, command: string, outcome: string): AuditRow {
    return this.write("audit", () =>
      this.db.transaction(() => {
        const last = this.s.last.get() as { id: number; hash: string } | undefined;
        const base = { id: (last?.id ?? 0) + 1, at: this.clock.now(), who, command, outcome };
        const prevHash = last?.hash ?? AUDIT_GENESIS;
        const row: AuditRow = { ...base, prevHash, hash: auditHash(prevHash, base) };
        this.s.append.run(row);
        // The head counts on from itself: rows deleted from the end stay visible after the next row too.
        const count = (readAuditHead(this.db)?.count ?? last?.id ?? 0) + 1;
        this.s.setMeta.run(AUDIT_HEAD_KEY, JSON.stringify({ count, hash: row.hash }));
        return row;
      })(),
    );
  }

  recentAudit(limit: number): AuditRow[] {
    return (this.s.audit.all(limit) as AuditDbRow[]).map(toAudit).reverse();
  }

  verifyAudit(): AuditVerification {
    return verifyAuditLog(this.db);
  }

  meta(key: string): string | null {
    const v = this.s.meta.get(key);
    return v === undefined ? null : String(v);
  }

  setMeta(key: string, value: string): void {
    this.write("meta", () => this.s.setMeta.run(key, value));
  }

  /** Captured, successful vends per local day and item, `from` to `to` (YYYY-MM-DD, inclusive). */
  sales(from: string, to: string): SalesLine[] {
    return this.s.sales.all({ from, to }) as SalesLine[];
  }

  /** A session (by session id or order id) with its intents and full event log, or null. */
  session(idOrOrder: string): SessionDetail | null {
    const row = this.s.session.get(idOrOrder, idOrOrder) as SessionDbRow | undefined;
    if (row === undefined) return null;
    return {
      session: toSession(row),
      intents: (this.s.intents.all(row.id) as IntentDbRow[]).map(toIntent),
      events: this.s.events.all(row.id) as SessionDetail["events"],
    };
  }
}
