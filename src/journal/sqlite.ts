import { randomBytes, randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";
import type { Minor } from "../core/money.js";
import type {
  Decision,
  Intent,
  Journal,
  NewIntent,
  NewSession,
  SessionResult,
  SessionRow,
  VendOutcome,
  VendRow,
} from "./journal.js";
import { JournalError } from "./journal.js";
import { MIGRATIONS } from "./migrations.js";
import { type IntentDbRow, type SessionDbRow, toIntent, toSession } from "./rows.js";

export interface SqliteJournalOptions {
  /** Database file, or `:memory:` for tests and the in-memory demo. */
  path: string;
  /** Short unit id, the prefix of order ids (≤ 12 characters). */
  unitId: string;
  clock: Clock;
  /** `PRAGMA journal_size_limit` in bytes (reliability.md §1.3); default 8 MiB. */
  sizeLimitBytes?: number;
}

/**
 * The better-sqlite3 journal: WAL with `synchronous=FULL`, set explicitly and verified after the first
 * write (better-sqlite3 defaults WAL to NORMAL, which loses recent commits on power loss; reliability §1.2).
 */
export function openSqliteJournal(opts: SqliteJournalOptions): SqliteJournal {
  let db: Database.Database;
  try {
    db = new Database(opts.path);
  } catch (e) {
    throw new JournalError("io", `cannot open journal ${opts.path}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return new SqliteJournal(db, opts);
  } catch (e) {
    db.close();
    throw e;
  }
}

export class SqliteJournal implements Journal {
  private readonly stmts;

  constructor(
    private readonly db: Database.Database,
    private readonly opts: SqliteJournalOptions,
  ) {
    const memory = opts.path === ":memory:";
    if (!memory) {
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") throw new JournalError("durability", `journal_mode is ${String(mode)}, not wal`);
    }
    db.pragma("synchronous = FULL");
    db.pragma(`journal_size_limit = ${Math.trunc(opts.sizeLimitBytes ?? 8 * 1024 * 1024)}`);
    db.pragma("foreign_keys = ON");
    this.migrate();
    // Verify after a write: on a fresh WAL database the pragma can read FULL before the first write and
    // NORMAL after it (reliability.md §1.2).
    db.prepare(
      "INSERT INTO meta (key, value) VALUES ('opened_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ).run(String(opts.clock.now()));
    const sync = db.pragma("synchronous", { simple: true });
    if (sync !== 2)
      throw new JournalError("durability", `synchronous is ${String(sync)} after a write, not FULL (2)`);

    this.stmts = {
      seq: db.prepare(
        "INSERT INTO meta (key, value) VALUES ('order_seq', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value",
      ),
      openSession: db.prepare(
        "INSERT INTO sessions (id, order_id, flow, item, price, driver, opened_at) VALUES (@id, @orderId, @flow, @item, @price, @driver, @at)",
      ),
      intent: db.prepare(
        "INSERT INTO intents (session_id, op, order_id, payment_id, amount, idempotency_key, state, created_at, updated_at) VALUES (@sessionId, @op, @orderId, @paymentId, @amount, @key, 'pending', @at, @at) RETURNING id",
      ),
      completeIntent: db.prepare(
        "UPDATE intents SET state = @state, detail = @detail, updated_at = @at WHERE id = @id",
      ),
      setPaymentId: db.prepare("UPDATE sessions SET payment_id = @paymentId WHERE id = @id"),
      approved: db.prepare(
        "UPDATE sessions SET approved_amount = COALESCE(approved_amount, 0) + @price WHERE id = @id",
      ),
      vendRow: db.prepare(
        "INSERT INTO vends (session_id, item, price, approved_at) VALUES (@id, @item, @price, @at)",
      ),
      vend: db.prepare("UPDATE sessions SET vend_outcome = @outcome WHERE id = @id"),
      vendOutcome: db.prepare(
        "UPDATE vends SET outcome = @outcome, settled_at = @at WHERE id = (SELECT max(id) FROM vends WHERE session_id = @id AND outcome IS NULL)",
      ),
      vends: db.prepare("SELECT id, item, price, outcome FROM vends WHERE session_id = ? ORDER BY id"),
      decide: db.prepare(
        "UPDATE sessions SET decision = @action, decision_amount = @amount, decision_reason = @reason, review = @review WHERE id = @id",
      ),
      close: db.prepare(
        "UPDATE sessions SET result = @result, reason = @reason, closed_at = @at WHERE id = @id",
      ),
      event: db.prepare("INSERT INTO events (session_id, at, type, data) VALUES (?, ?, ?, ?)"),
      session: db.prepare("SELECT * FROM sessions WHERE id = ?"),
      intents: db.prepare("SELECT * FROM intents WHERE session_id = ? ORDER BY id"),
      unresolved: db.prepare(
        "SELECT * FROM sessions WHERE closed_at IS NULL OR result = 'unsettled' ORDER BY opened_at, rowid",
      ),
      ownsLive: db.prepare("SELECT 1 FROM sessions WHERE order_id = ? AND closed_at IS NULL"),
      sessions: db.prepare("SELECT * FROM sessions ORDER BY opened_at DESC, rowid DESC LIMIT ?"),
      expired: db.prepare(
        "SELECT id FROM sessions WHERE closed_at IS NOT NULL AND closed_at < ? AND result <> 'unsettled' LIMIT ?",
      ),
      dropEvents: db.prepare("DELETE FROM events WHERE session_id = ?"),
      dropVends: db.prepare("DELETE FROM vends WHERE session_id = ?"),
      dropIntents: db.prepare("DELETE FROM intents WHERE session_id = ?"),
      dropSession: db.prepare("DELETE FROM sessions WHERE id = ?"),
      dropLooseEvents: db.prepare("DELETE FROM events WHERE session_id IS NULL AND at < ?"),
    };
  }

  private migrate(): void {
    const version = Number(this.db.pragma("user_version", { simple: true }));
    if (version > MIGRATIONS.length) {
      throw new JournalError(
        "integrity",
        `journal schema ${version} is newer than this vendd (${MIGRATIONS.length})`,
      );
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      const sql = MIGRATIONS[v];
      if (sql === undefined) break;
      this.db.transaction(() => {
        this.db.exec(sql);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  private depth = 0;
  private committed = 0;

  get commits(): number {
    return this.committed;
  }

  atomically<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.depth++;
    try {
      const result = this.db.transaction(fn)();
      this.committed++;
      return result;
    } finally {
      this.depth--;
    }
  }

  private write<T>(what: string, fn: () => T): T {
    try {
      const result = fn();
      if (this.depth === 0) this.committed++;
      return result;
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError("io", `journal write failed (${what}): ${(e as Error).message}`, { cause: e });
    }
  }

  private changed(info: Database.RunResult, sessionId: string): void {
    if (info.changes !== 1) throw new JournalError("unknownSession", `no session ${sessionId}`);
  }

  nextOrderId(): string {
    return this.write("order id", () => {
      const row = this.stmts.seq.get() as { value: string } | undefined;
      const seq = Number(row?.value ?? "1");
      // unit id (≤ 12) + sequence + 4 random hex: unique even if the journal is ever re-created (≤ 32).
      return `${this.opts.unitId}-${seq.toString(36).padStart(5, "0")}-${randomBytes(2).toString("hex")}`;
    });
  }

  openSession(s: NewSession): void {
    this.write("open session", () => {
      this.stmts.openSession.run({ ...s, at: this.opts.clock.now() });
    });
  }

  recordIntent(i: NewIntent): Intent {
    const key = randomUUID();
    const at = this.opts.clock.now();
    const row = this.write("intent", () => this.stmts.intent.get({ ...i, key, at }) as { id: number });
    return { ...i, id: row.id, idempotencyKey: key, state: "pending", createdAt: at };
  }

  completeIntent(intentId: number, outcome: "done" | "failed", detail: string): void {
    this.write("complete intent", () => {
      this.stmts.completeIntent.run({ id: intentId, state: outcome, detail, at: this.opts.clock.now() });
    });
  }

  setPaymentId(sessionId: string, paymentId: string): void {
    this.write("payment id", () =>
      this.changed(this.stmts.setPaymentId.run({ id: sessionId, paymentId }), sessionId),
    );
  }

  approveVend(sessionId: string, item: number, price: Minor): void {
    this.write("approved", () =>
      this.db.transaction(() => {
        this.changed(this.stmts.approved.run({ id: sessionId, price }), sessionId);
        this.stmts.vendRow.run({ id: sessionId, item, price, at: this.opts.clock.now() });
      })(),
    );
  }

  recordVend(sessionId: string, outcome: VendOutcome): void {
    this.write("vend outcome", () =>
      this.db.transaction(() => {
        this.changed(this.stmts.vend.run({ id: sessionId, outcome }), sessionId);
        this.stmts.vendOutcome.run({ id: sessionId, outcome, at: this.opts.clock.now() });
      })(),
    );
  }

  vends(sessionId: string): VendRow[] {
    return (this.stmts.vends.all(sessionId) as VendRow[]).map((v) => ({ ...v }));
  }

  decide(sessionId: string, d: Decision): void {
    this.write("decision", () =>
      this.changed(
        this.stmts.decide.run({
          id: sessionId,
          action: d.action,
          amount: d.amount,
          reason: d.reason,
          review: d.review ? 1 : 0,
        }),
        sessionId,
      ),
    );
  }

  closeSession(sessionId: string, result: SessionResult, reason: string): void {
    this.write("close", () =>
      this.changed(
        this.stmts.close.run({ id: sessionId, result, reason, at: this.opts.clock.now() }),
        sessionId,
      ),
    );
  }

  event(sessionId: string | null, type: string, data?: Record<string, unknown>): void {
    this.write("event", () => {
      this.stmts.event.run(
        sessionId,
        this.opts.clock.now(),
        type,
        data === undefined ? null : JSON.stringify(data),
      );
    });
  }

  session(sessionId: string): SessionRow | undefined {
    const row = this.stmts.session.get(sessionId) as SessionDbRow | undefined;
    return row && toSession(row);
  }

  intents(sessionId: string): Intent[] {
    return (this.stmts.intents.all(sessionId) as IntentDbRow[]).map(toIntent);
  }

  unresolved(): SessionRow[] {
    return (this.stmts.unresolved.all() as SessionDbRow[]).map(toSession);
  }

  ownsLiveOrder(orderId: string): boolean {
    return this.stmts.ownsLive.get(orderId) !== undefined;
  }

  sessions(opts?: { limit?: number }): SessionRow[] {
    return (this.stmts.sessions.all(opts?.limit ?? 1_000_000) as SessionDbRow[]).map(toSession);
  }

  retain(before: number, batch = 500): number {
    let deleted = 0;
    for (;;) {
      const n = this.atomically(() => {
        const ids = this.stmts.expired.all(before, batch) as { id: string }[];
        for (const { id } of ids) {
          this.stmts.dropEvents.run(id);
          this.stmts.dropVends.run(id);
          this.stmts.dropIntents.run(id);
          this.stmts.dropSession.run(id);
        }
        return ids.length;
      });
      deleted += n;
      if (n < batch) break;
    }
    this.atomically(() => this.stmts.dropLooseEvents.run(before));
    return deleted;
  }

  /** `PRAGMA integrity_check`; "ok" when healthy. */
  integrityCheck(): string {
    return String(this.db.pragma("integrity_check", { simple: true }));
  }

  /** TRUNCATE checkpoint (idle, shutdown); returns true when the WAL was truncated (busy = 0). */
  checkpoint(): boolean {
    const rows = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
    return rows[0]?.busy === 0;
  }

  close(): void {
    if (!this.db.open) return;
    try {
      if (this.opts.path !== ":memory:") this.checkpoint();
    } finally {
      this.db.close();
    }
  }
}
