import type Database from "better-sqlite3";
import type {
  DexData,
  FaultData,
  ServiceData,
  SessionData,
  UnitEvent,
  UnitEventKind,
  VersionData,
} from "../core/fleetWire.js";
import type { SessionDbRow } from "./rows.js";

/**
 * The fleet outbox in the journal (migration 5): every finished session, fault, service change and version
 * change as a {@link UnitEvent} with a per-unit sequence number, written in the same transaction as the
 * state it reports. The sequence is a counter in `meta` (`outbox_seq`): 1, 2, 3, … with no gaps, never
 * reused or lowered, even after retention deleted rows. The sender (src/daemon/fleetLink.ts) reads pending
 * events in seq order and marks them delivered up to what the fleet acknowledged.
 *
 * Undelivered events older than the backlog limit are dropped, but their sequence numbers are not: each
 * dropped row is kept as a tombstone (kind `dropped`, no data) and sent as a `fault` event `outboxOverflow`,
 * so the fleet's contiguous `committed` still advances past them and it sees exactly which events it lost.
 */

/** What the sender needs of the journal (SqliteJournal implements it; tests may fake it). */
export interface Outbox {
  /** Up to `limit` undelivered events in seq order. */
  outboxPending(limit: number): UnitEvent[];
  /** Marks every event with seq ≤ `upTo` delivered; returns how many changed. */
  markDelivered(upTo: number): number;
  outboxStats(): OutboxStats;
  /**
   * The journal was replaced (the fleet has committed more than this journal ever assigned): renumbers the
   * undelivered events to follow `committed`; returns how many were renumbered.
   */
  renumberOutbox(committed: number): number;
  /**
   * The fleet has fewer events than this unit delivered (it was restored from an older backup): marks the
   * delivered events above `committed` undelivered again, so they are sent again, and puts a tombstone in
   * for each one retention already deleted (sent as an `outboxOverflow` fault), so that the fleet's
   * contiguous committed seq can pass them and it sees which it lost. Returns how many events are sent
   * again (tombstones included); 0 when the fleet lacks nothing this unit delivered.
   */
  resendOutbox(committed: number): number;
}

export interface OutboxStats {
  /** Undelivered events. */
  events: number;
  /** `at` of the oldest undelivered event, ms. */
  oldestAt: number | null;
  /** Highest seq the journal has assigned (0 before the first). */
  lastSeq: number;
}

/** The data of each event kind the daemon reports itself (sessions are written by the journal). */
export interface ReportData {
  fault: FaultData;
  service: ServiceData;
  version: VersionData;
}

export const OUTBOX_OVERFLOW = "outboxOverflow";

interface OutboxDbRow {
  seq: number;
  at: number;
  kind: string;
  data: string;
}

export class OutboxStore {
  private readonly stmts;

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      next: db.prepare(
        "INSERT INTO meta (key, value) VALUES ('outbox_seq', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value",
      ),
      lastSeq: db.prepare("SELECT value FROM meta WHERE key = 'outbox_seq'").pluck(),
      setSeq: db.prepare(
        "INSERT INTO meta (key, value) VALUES ('outbox_seq', @value) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ),
      insert: db.prepare("INSERT INTO outbox (seq, at, kind, data, delivered) VALUES (?, ?, ?, ?, 0)"),
      pending: db.prepare("SELECT seq, at, kind, data FROM outbox WHERE delivered = 0 ORDER BY seq LIMIT ?"),
      mark: db.prepare("UPDATE outbox SET delivered = 1 WHERE delivered = 0 AND seq <= ?"),
      stats: db.prepare("SELECT count(*) AS events, min(at) AS oldestAt FROM outbox WHERE delivered = 0"),
      undelivered: db.prepare("SELECT seq FROM outbox WHERE delivered = 0 ORDER BY seq").pluck(),
      renumber: db.prepare("UPDATE outbox SET seq = ? WHERE seq = ?"),
      dropDelivered: db.prepare("DELETE FROM outbox WHERE delivered = 1 AND at < ?"),
      deliveredAbove: db.prepare("SELECT 1 FROM outbox WHERE delivered = 1 AND seq > ? LIMIT 1").pluck(),
      firstAbove: db.prepare("SELECT min(seq) FROM outbox WHERE seq > ?").pluck(),
      reopen: db.prepare("UPDATE outbox SET delivered = 0 WHERE delivered = 1 AND seq > ?"),
      tombstone: db.prepare(
        "INSERT INTO outbox (seq, at, kind, data, delivered) VALUES (?, ?, 'dropped', ?, 0)",
      ),
      overflow: db.prepare(
        "UPDATE outbox SET kind = 'dropped', data = '{}' WHERE delivered = 0 AND kind <> 'dropped' AND at < ? RETURNING seq",
      ),
      session: db.prepare("SELECT * FROM sessions WHERE id = ?"),
      vends: db.prepare("SELECT item, price, outcome FROM vends WHERE session_id = ? ORDER BY id"),
      member: db.prepare(
        "SELECT member_id AS memberId, plan_id AS planId FROM plan_sessions WHERE session_id = ?",
      ),
      done: db.prepare(
        "SELECT op, coalesce(sum(amount), 0) AS amount FROM intents WHERE session_id = ? AND state = 'done' GROUP BY op",
      ),
    };
  }

  /**
   * Appends one event, the counter and the row in one transaction (a savepoint inside the caller's): the
   * counter never moves without its row, so the sequence has no gaps. Returns its seq.
   */
  append(kind: UnitEventKind | "dropped", at: number, data: unknown): number {
    return this.db.transaction(() => {
      const seq = Number((this.stmts.next.get() as { value: string }).value);
      this.stmts.insert.run(seq, at, kind, JSON.stringify(data));
      return seq;
    })();
  }

  /**
   * Sales made before the unit had a fleet outbox (issue 43: a unit enrolled after it sold): the `session`
   * events of the sessions closed since `since`, the newest `max` of them, appended oldest first with their
   * closing times, once. Only a journal whose outbox was never written is backfilled (a unit with a fleet
   * from the start already reported each session); a mark in `meta` keeps it to one time. The fleet stores
   * a session once whatever it is sent (sales by unit and session), so a repeat could change nothing
   * anyway. Returns the events appended.
   */
  backfill(currency: string, since: number, max: number): number {
    const done = this.db
      .prepare("SELECT 1 FROM meta WHERE key IN ('outbox_backfill', 'outbox_seq') LIMIT 1")
      .pluck()
      .get();
    if (done !== undefined) return 0;
    return this.db.transaction(() => {
      const rows = this.db
        .prepare(
          "SELECT id, closed_at FROM sessions WHERE closed_at IS NOT NULL AND closed_at >= ? ORDER BY closed_at DESC, id DESC LIMIT ?",
        )
        .all(since, max) as { id: string; closed_at: number }[];
      let n = 0;
      for (const r of rows.reverse()) {
        const data = this.sessionData(r.id, currency);
        if (data === null) continue;
        this.append("session", r.closed_at, data);
        n += 1;
      }
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('outbox_backfill', ?)").run(String(n));
      return n;
    })();
  }

  /**
   * The `session` event of a closed session, from the journal's own rows; null while it is not closed.
   * `captured`/`refunded` are the confirmed (done) capture and refund intents.
   */
  sessionData(sessionId: string, currency: string): SessionData | null {
    const s = this.stmts.session.get(sessionId) as SessionDbRow | undefined;
    if (s === undefined || s.closed_at === null || s.result === null) return null;
    const sums = new Map(
      (this.stmts.done.all(sessionId) as { op: string; amount: number }[]).map((r) => [r.op, r.amount]),
    );
    const vends = this.stmts.vends.all(sessionId) as SessionData["vends"];
    // A plan vend (issue 18) names its member (ids only: the badge hash stays in the journal).
    const member = this.stmts.member.get(sessionId) as { memberId: string; planId: string } | undefined;
    return {
      sessionId: s.id,
      orderId: s.order_id,
      paymentId: s.payment_id,
      driver: s.driver as SessionData["driver"],
      flow: s.flow === "checkin" ? "checkin" : "selection",
      item: s.item,
      price: s.price,
      result: s.result as SessionData["result"],
      reason: (s.reason ?? "").slice(0, 500),
      approved: s.approved_amount ?? 0,
      captured: sums.get("capture") ?? 0,
      refunded: sums.get("refund") ?? 0,
      // The session's own currency (journal migration 7); older rows the daemon has not filled: the unit's.
      currency: s.currency ?? currency,
      openedAt: s.opened_at,
      closedAt: s.closed_at,
      vends: vends.slice(0, 100).map((v) => ({ item: v.item, price: v.price, outcome: v.outcome })),
      review: s.review === 1,
      ...(member === undefined ? {} : { member: { memberId: member.memberId, planId: member.planId } }),
    };
  }

  pending(limit: number): UnitEvent[] {
    const rows = this.stmts.pending.all(Math.max(1, Math.trunc(limit))) as OutboxDbRow[];
    return rows.map(toEvent);
  }

  markDelivered(upTo: number): number {
    return this.stmts.mark.run(Math.trunc(upTo)).changes;
  }

  lastSeq(): number {
    return Number(this.stmts.lastSeq.get() ?? 0);
  }

  stats(): OutboxStats {
    const r = this.stmts.stats.get() as { events: number; oldestAt: number | null };
    return { events: r.events, oldestAt: r.oldestAt, lastSeq: this.lastSeq() };
  }

  /** The undelivered events and the counter move together, in one transaction. */
  renumber(committed: number): number {
    return this.db.transaction(() => {
      const seqs = this.stmts.undelivered.all() as number[];
      // Every new seq is above `committed` ≥ lastSeq + 1 > any seq in the table: no collision in any order.
      for (const [i, seq] of seqs.entries()) this.stmts.renumber.run(committed + 1 + i, seq);
      this.stmts.setSeq.run({ value: String(committed + seqs.length) });
      return seqs.length;
    })();
  }

  /**
   * Seqs above the fleet's `committed` whose rows retention deleted: those below the first row left above
   * it (all of them up to the last seq when none is left). Empty range: `to < from`.
   */
  private deletedAbove(committed: number): { from: number; to: number } {
    const first = this.stmts.firstAbove.get(committed) as number | null;
    return { from: committed + 1, to: first === null ? this.lastSeq() : first - 1 };
  }

  /** Whether the fleet lacks events this unit delivered: marked delivered, or deleted by retention. */
  lacks(committed: number): boolean {
    if (committed >= this.lastSeq()) return false;
    const deleted = this.deletedAbove(committed);
    return this.stmts.deliveredAbove.get(committed) !== undefined || deleted.to >= deleted.from;
  }

  /**
   * Sends again what the fleet lacks above `committed`: delivered events are marked undelivered, deleted
   * ones come back as tombstones (`at` is `now`). One transaction. Returns how many.
   */
  resend(committed: number, now: number): number {
    return this.db.transaction(() => {
      if (!this.lacks(committed)) return 0;
      const deleted = this.deletedAbove(committed);
      let n = this.stmts.reopen.run(committed).changes;
      const data = JSON.stringify({ deleted: true });
      for (let seq = deleted.from; seq <= deleted.to; seq++) {
        this.stmts.tombstone.run(seq, now, data);
        n++;
      }
      return n;
    })();
  }

  /** Deletes delivered events older than `deliveredBefore`; returns how many. */
  dropDelivered(deliveredBefore: number): number {
    return this.stmts.dropDelivered.run(deliveredBefore).changes;
  }

  /** Turns undelivered events older than `before` into tombstones; returns their seqs. */
  overflow(before: number): number[] {
    return (this.stmts.overflow.all(before) as { seq: number }[]).map((r) => r.seq);
  }
}

function toEvent(r: OutboxDbRow): UnitEvent {
  const base = { seq: r.seq, at: r.at };
  switch (r.kind) {
    case "session":
      return { ...base, kind: "session", data: JSON.parse(r.data) as SessionData };
    case "fault":
      return { ...base, kind: "fault", data: JSON.parse(r.data) as FaultData };
    case "service":
      return { ...base, kind: "service", data: JSON.parse(r.data) as ServiceData };
    case "version":
      return { ...base, kind: "version", data: JSON.parse(r.data) as VersionData };
    case "dex":
      return { ...base, kind: "dex", data: JSON.parse(r.data) as DexData };
    default:
      return {
        ...base,
        kind: "fault",
        data: {
          code: OUTBOX_OVERFLOW,
          state: "raised",
          message: r.data.includes('"deleted":true')
            ? `event ${r.seq} was delivered and then deleted by retention before the fleet asked for it again (fleet restored from an older backup?)`
            : `event ${r.seq} was dropped undelivered: the backlog exceeded fleet.maxBacklogDays`,
        },
      };
  }
}
