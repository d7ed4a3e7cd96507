import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { createPrivateFile } from "../core/atomicFile.js";
import type { Clock } from "../core/clock.js";
import { DAY_MS } from "../core/days.js";
import type { UnitEvent } from "../core/fleetWire.js";
import type { Minor } from "../core/money.js";
import { stampCleanClose } from "./cleanClose.js";
import { ConsoleStore } from "./consoleStore.js";
import { DexStore, dexEventData, type NewDexRead } from "./dexStore.js";
import { MAX_ORDER_SEQ } from "./inspect.js";
import type {
  Decision,
  Intent,
  Journal,
  NewIntent,
  NewSession,
  SessionResult,
  VendOutcome,
} from "./journal.js";
import { JournalError } from "./journal.js";
import { type ClaimedJournal, claimJournal, raiseMark } from "./open.js";
import { type Outbox, type OutboxStats, OutboxStore, type ReportData } from "./outbox.js";
import { classifyJournalError } from "./problems.js";
import { countPlanVend } from "./sqlitePlan.js";
import { SqliteReads } from "./sqliteReads.js";
import { retainOutboxEvents, retainSessions } from "./sqliteRetain.js";
import { setUpConnection } from "./sqliteSetup.js";
import { prepareStatements } from "./statements.js";

export interface SqliteJournalOptions {
  /** Database file, or `:memory:` for tests and the in-memory demo. */
  path: string;
  /** Short unit id, the prefix of order ids (≤ 12 characters). */
  unitId: string;
  clock: Clock;
  /** `PRAGMA journal_size_limit` in bytes (reliability.md §1.3); default 8 MiB. */
  sizeLimitBytes?: number;
  /** Free bytes at a directory (default statfs); tests inject a full disk. */
  freeBytes?: (dir: string) => number | null;
  /**
   * The fleet outbox (outbox.ts): what a `session` event needs that the journal does not hold. Absent (tools,
   * tests of other things): no event is written (no fleet link configured).
   */
  outbox?: { currency: string };
  /**
   * ISO 4217 code of the unit's amounts (its config's `currency`): stored with each session it opens, and
   * given to sessions from before journal migration 7 (issue 30). Absent (tools, tests): the outbox's.
   */
  currency?: string;
}

/**
 * The one way to open a journal for writing. A file journal is first claimed (open.ts): the exclusive lock,
 * the owner sidecar, the read-only start check; only then is it opened read-write, in WAL with
 * `synchronous=FULL`, set explicitly and verified after the first write (better-sqlite3 defaults WAL to
 * NORMAL, which loses recent commits on power loss; reliability §1.2).
 * @throws JournalError `locked` (another process owns the journal) or `unusable` (with path, cause and next
 *   step; the file untouched), or `durability`.
 */
/** How far back, and how many, sales made before the fleet outbox existed are sent once (issue 43). */
export const BACKFILL_DAYS = 92;
export const BACKFILL_MAX = 20_000;

export function openSqliteJournal(opts: SqliteJournalOptions): SqliteJournal {
  if (opts.path === ":memory:") return new SqliteJournal(new Database(opts.path), opts, null);
  const claim = claimJournal(opts.path, {
    now: opts.clock.now(),
    ...(opts.freeBytes === undefined ? {} : { freeBytes: opts.freeBytes }),
  });
  let db: Database.Database | null = null;
  try {
    // It holds money: mode 0600 whatever the umask (its -wal and -shm inherit it).
    createPrivateFile(opts.path);
    db = new Database(opts.path);
    return new SqliteJournal(db, opts, claim);
  } catch (e) {
    db?.close();
    claim.lock.release();
    throw classifyJournalError(e, opts.path, opts.freeBytes);
  }
}

export class SqliteJournal extends SqliteReads implements Journal, Outbox {
  private readonly outbox: OutboxStore;

  /** The order-id epoch (seconds): from the claim (owner sidecar), else the clock. */
  private readonly epoch: number;

  constructor(
    db: Database.Database,
    private readonly opts: SqliteJournalOptions,
    private readonly claim: ClaimedJournal | null,
  ) {
    const epoch = claim?.owner.epoch ?? Math.floor(opts.clock.now() / 1000);
    setUpConnection(db, {
      memory: opts.path === ":memory:",
      now: opts.clock.now(),
      unitId: opts.unitId,
      ...((opts.currency ?? opts.outbox?.currency) === undefined
        ? {}
        : { currency: opts.currency ?? opts.outbox?.currency }),
      ...(opts.sizeLimitBytes === undefined ? {} : { sizeLimitBytes: opts.sizeLimitBytes }),
    });
    super(db, prepareStatements(db));
    this.epoch = epoch;
    this.outbox = new OutboxStore(db);
    const outbox = opts.outbox;
    if (outbox !== undefined)
      this.write("backfillOutbox", () =>
        this.outbox.backfill(outbox.currency, opts.clock.now() - BACKFILL_DAYS * DAY_MS, BACKFILL_MAX),
      );
    // The high-water mark outside the journal (owner.ts): what this start saw is now the floor.
    this.raiseMark();
  }

  /** Records the journal's id and order sequence in the owner sidecar (file journals only). */
  private raiseMark(): void {
    if (this.claim === null) return;
    const id = String(this.stmts.meta.get("journal_id"));
    raiseMark(this.claim, id, Number(this.stmts.meta.get("order_seq") ?? 0));
  }

  private changed(info: Database.RunResult, sessionId: string): void {
    if (info.changes !== 1) throw new JournalError("unknownSession", `no session ${sessionId}`);
  }

  nextOrderId(): string {
    return this.write("nextOrderId", () => {
      const row = this.stmts.seq.get() as { value: string } | undefined;
      const seq = Number(row?.value ?? "1");
      // Decimal, ≤ 32 characters (the older interface's OrderId): unit ≤ 12, epoch 10 digits, seq ≤ 8.
      const id = `${this.opts.unitId}-${this.epoch}-${seq}`;
      if (id.length > 32 || seq > MAX_ORDER_SEQ)
        throw new JournalError("integrity", `order id ${id} would exceed 32 characters`);
      return id;
    });
  }

  openSession(s: NewSession): void {
    this.write("openSession", () => {
      const { member, ...row } = s;
      this.stmts.openSession.run({
        ...row,
        at: this.opts.clock.now(),
        currency: this.opts.currency ?? this.opts.outbox?.currency ?? null,
      });
      if (member !== undefined) this.stmts.planSession.run({ id: s.id, ...member });
    });
  }

  recordIntent(i: NewIntent): Intent {
    const key = randomUUID();
    const at = this.opts.clock.now();
    const row = this.write("recordIntent", () => this.stmts.intent.get({ ...i, key, at }) as { id: number });
    return { ...i, id: row.id, idempotencyKey: key, state: "pending", createdAt: at };
  }

  completeIntent(intentId: number, outcome: "done" | "failed", detail: string): void {
    this.write("completeIntent", () =>
      this.db.transaction(() => {
        const at = this.opts.clock.now();
        this.stmts.completeIntent.run({ id: intentId, state: outcome, detail, at });
        // A refund confirmed after the session closed changes what the fleet was told: report it again.
        if (outcome !== "done") return;
        const row = this.stmts.intentSession.get(intentId) as { session_id: string; op: string } | undefined;
        if (row === undefined || row.op !== "refund") return;
        if (this.session(row.session_id)?.closedAt != null) this.sessionEvent(row.session_id, at);
      })(),
    );
  }

  setPaymentId(sessionId: string, paymentId: string): void {
    this.write("setPaymentId", () =>
      this.changed(this.stmts.setPaymentId.run({ id: sessionId, paymentId }), sessionId),
    );
  }

  approveVend(sessionId: string, item: number, price: Minor): void {
    this.write("approveVend", () =>
      this.db.transaction(() => {
        this.changed(this.stmts.approved.run({ id: sessionId, price }), sessionId);
        this.stmts.vendRow.run({ id: sessionId, item, price, at: this.opts.clock.now() });
      })(),
    );
  }

  recordVend(sessionId: string, outcome: VendOutcome): void {
    this.write("recordVend", () =>
      this.db.transaction(() => {
        this.changed(this.stmts.vend.run({ id: sessionId, outcome }), sessionId);
        this.stmts.vendOutcome.run({ id: sessionId, outcome, at: this.opts.clock.now() });
        countPlanVend(this.stmts, sessionId, outcome);
      })(),
    );
  }

  decide(sessionId: string, d: Decision): void {
    this.write("decide", () =>
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
    this.write("closeSession", () =>
      this.db.transaction(() => {
        const at = this.opts.clock.now();
        this.changed(this.stmts.close.run({ id: sessionId, result, reason, at }), sessionId);
        this.sessionEvent(sessionId, at);
      })(),
    );
  }

  /** The closed session's `session` event, in the transaction that changed it (fleet outbox configured). */
  private sessionEvent(sessionId: string, at: number): void {
    const currency = this.opts.outbox?.currency;
    if (currency === undefined) return;
    const data = this.outbox.sessionData(sessionId, currency);
    if (data !== null) this.outbox.append("session", at, data);
  }

  /** Appends a fault, service or version event (deferred); 0 and nothing written without a fleet outbox. */
  report<K extends keyof ReportData>(kind: K, data: ReportData[K]): number {
    if (this.opts.outbox === undefined) return 0;
    return this.write("report", () => this.outbox.append(kind, this.opts.clock.now(), data));
  }

  outboxPending(limit: number): UnitEvent[] {
    return this.outbox.pending(limit);
  }

  markDelivered(upTo: number): number {
    return this.write("markDelivered", () => this.outbox.markDelivered(upTo));
  }

  outboxStats(): OutboxStats {
    return this.outbox.stats();
  }

  renumberOutbox(committed: number): number {
    return this.write("renumberOutbox", () => {
      if (committed <= this.outbox.lastSeq()) return 0;
      return this.outbox.renumber(committed);
    });
  }

  resendOutbox(committed: number): number {
    const c = Math.trunc(committed);
    // Read first: in the usual case (the fleet has all that was delivered) no write transaction at all.
    if (!this.outbox.lacks(c)) return 0;
    return this.write("resendOutbox", () => this.outbox.resend(c, this.opts.clock.now()));
  }

  /**
   * Outbox retention: deletes delivered events older than `deliveredBefore`, and turns undelivered events
   * older than `undeliveredBefore` into tombstones (sent as `outboxOverflow` faults; their seqs are kept),
   * reporting a `fault` `outboxOverflow` when it dropped any. Returns the counts.
   */
  retainOutbox(deliveredBefore: number, undeliveredBefore: number): { deleted: number; dropped: number[] } {
    return this.atomically(
      () =>
        this.write("retain", () =>
          retainOutboxEvents(this.outbox, () => this.opts.clock.now(), deliveredBefore, undeliveredBefore),
        ),
      { durable: false },
    );
  }

  flag(sessionId: string, reason: string): void {
    this.write("flag", () =>
      this.db.transaction(() => {
        this.changed(this.stmts.flag.run(sessionId), sessionId);
        this.stmts.event.run(sessionId, this.opts.clock.now(), "flagged", JSON.stringify({ reason }));
      })(),
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

  retain(before: number, batch = 500): number {
    // Deferred (WRITE_DURABILITY.retain): a deletion lost in a power cut is done again by the next run.
    const drop = <T>(fn: () => T): T => this.atomically(() => this.write("retain", fn), { durable: false });
    return retainSessions(this.stmts, drop, before, batch);
  }

  /**
   * TRUNCATE checkpoint (idle, shutdown); returns true when the WAL was truncated (busy = 0). Then everything
   * is in the main file, so the owner sidecar's high-water mark is raised to the current order sequence.
   */
  checkpoint(): boolean {
    const rows = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
    const truncated = rows[0]?.busy === 0;
    if (truncated) {
      // The checkpoint synced the WAL first: every commit, durable or not, is on disk now.
      this.tx.tail = 0;
      this.raiseMark();
    }
    return truncated;
  }

  private consoleTables: ConsoleStore | null = null;

  /** The technician console's tables (login attempts, audit log) on this connection (consoleStore.ts). */
  console(): ConsoleStore {
    this.consoleTables ??= new ConsoleStore(this.db, this.opts.clock);
    return this.consoleTables;
  }

  private dexTable: DexStore | null = null;

  /** The DEX audit reads (dexStore.ts, issue 36) on this connection. */
  dex(): DexStore {
    this.dexTable ??= new DexStore(this.db);
    return this.dexTable;
  }

  /**
   * Records a DEX read and, with a fleet outbox, its `dex` event, in one durable transaction (issue 36): a
   * read is in the outbox exactly when it is in the journal, so the fleet gets each read once.
   * @returns false when this read id was recorded before (nothing written).
   */
  recordDexRead(read: NewDexRead): boolean {
    return this.atomically(() => {
      const fresh = this.dex().record(read);
      if (fresh && this.opts.outbox !== undefined) this.outbox.append("dex", read.at, dexEventData(read));
      return fresh;
    });
  }

  /** Checkpoints, closes the connection and releases the journal lock. */
  close(): void {
    if (!this.db.open) return;
    try {
      if (this.opts.path !== ":memory:") {
        const rows = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
        if (rows[0]?.busy === 0) this.tx.tail = 0;
      }
    } finally {
      try {
        // Only a sequence that is on disk raises the mark: not one a power cut could still take back.
        if (this.tx.tail === 0) this.raiseMark();
      } catch {
        // Best effort at shutdown (e.g. disk full): the next open raises the mark from the journal again.
      }
      this.db.close();
      // The next start may skip its quick_check if nothing touches the file until then (cleanClose.ts).
      if (this.claim !== null) stampCleanClose(this.opts.path);
      this.claim?.lock.release();
    }
  }
}
