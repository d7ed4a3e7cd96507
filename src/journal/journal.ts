import type { Minor } from "../core/money.js";

/** How a session's payment is settled: captured (in full or in part) or cancelled (released). */
export type SettleAction = "capture" | "cancel";

/**
 * How a session ended, as the journal records it. Defined here, below the engine, because the journal
 * stores it and imports nothing above it; the engine re-exports it (src/engine/types.ts).
 */
export type SessionResult =
  /** The vend was delivered and the payment captured. */
  | "captured"
  /** The vend failed or was abandoned after the funds were reserved; the reservation was released. */
  | "cancelled"
  /** The vend was denied before anything was reserved (customer rejected, timed out, service refused). */
  | "denied"
  /** The payment could not be settled now; the journal keeps the decision for recovery. */
  | "unsettled";

/**
 * The durable record of every session and every payment mutation: the unit's outbox. Exactly one writer
 * connection exists, in the daemon (reliability.md §1.2).
 *
 * Failure semantics:
 * - Every write method commits a transaction before it returns (or joins the open one). If it throws
 *   (disk full, fsync failure: SQLITE_IOERR_FSYNC), nothing was recorded and the caller must not send the
 *   request the row describes.
 * - Durability (DURABILITY.md): a transaction is committed with `synchronous=FULL` (one WAL fsync before it
 *   returns) unless it is declared `{ durable: false }`; then it commits with `synchronous=NORMAL` and
 *   becomes durable with the next FULL commit (the WAL is appended in order) or checkpoint. Each write has
 *   a class ({@link WRITE_DURABILITY}); a `durable` write inside a non-durable transaction throws
 *   `JournalError` `durability` (the transaction rolls back), so a request can never follow a row that was
 *   not synced. A write outside a transaction commits by its own class.
 * - Reads never throw for a missing row; they return `undefined` or an empty list.
 */
export interface Journal {
  /**
   * Runs `fn` as one transaction: its writes commit together when the outermost call returns; a throw
   * rolls all of them back. Calls nest (the inner ones join the outer transaction, and its durability).
   * `durable` (default true): commit with one WAL fsync (FULL) before returning; false: without waiting
   * for it (NORMAL), allowed only when every write in it is of the `deferred` class.
   */
  atomically<T>(fn: () => T, opts?: { durable?: boolean }): T;
  /** Number of transactions that wrote something, committed so far (durable or not). */
  readonly commits: number;
  /** Of {@link commits}, those committed with `synchronous=FULL`: one WAL fsync each. */
  readonly durableCommits: number;
  /**
   * Allocates the next order id: `<unit>-<epoch>-<seq>`, decimal, ≤ 32 characters. `epoch` (seconds) comes
   * from outside the journal (the open time, kept increasing by the owner sidecar), so ids stay unique per
   * unit even when the journal is lost and its sequence starts again.
   */
  nextOrderId(): string;
  openSession(s: NewSession): void;
  /** Records a payment mutation before it is sent, with a new idempotency key. */
  recordIntent(i: NewIntent): Intent;
  /** Marks an intent as confirmed by the service (or definitively refused). */
  completeIntent(intentId: number, outcome: "done" | "failed", detail: string): void;
  /** Stores the service's payment id once known. */
  setPaymentId(sessionId: string, paymentId: string): void;
  /**
   * Records a vend approved at the VMC, before the approval is sent: a vend row, and the session's running
   * approved total.
   */
  approveVend(sessionId: string, item: number, price: Minor): void;
  /**
   * Records the outcome of the session's vend that has none yet. For a plan vend (a session opened with a
   * `member`), a `success` or `unknown` outcome also counts the vend in the member's usage of its day and
   * month, in the same transaction (a failed or cancelled vend is not counted).
   */
  recordVend(sessionId: string, outcome: VendOutcome): void;
  /** The member of a plan vend's session (driver `plan`), or undefined for any other session. */
  planMember(sessionId: string): PlanMember | undefined;
  /** A member's counted plan vends in a period (`day` YYYY-MM-DD or `month` YYYY-MM of the list's zone). */
  planUsage(memberId: string, period: string): PlanUsage;
  /** The session's vends in order. */
  vends(sessionId: string): VendRow[];
  /** Records the capture-or-cancel decision and why (before the call). */
  decide(sessionId: string, decision: Decision): void;
  closeSession(sessionId: string, result: SessionResult, reason: string): void;
  /**
   * Flags a session for review (`review = 1`; a later decision never clears it) and records why as a
   * `flagged` event: what `vendd journal flagged` shows.
   */
  flag(sessionId: string, reason: string): void;
  /**
   * Appends to the event log what no row holds (a flag's reason, how recovery resolved a session, the
   * daemon's journal checks). A session's life is not repeated here: its rows hold it with their times
   * (opened_at; the start intent's created_at and updated_at, when the service answered; each vend's
   * approved_at and settled_at; the decision with its intent's created_at; closed_at).
   */
  event(sessionId: string | null, type: string, data?: Record<string, unknown>): void;

  session(sessionId: string): SessionRow | undefined;
  intents(sessionId: string): Intent[];
  /** Sessions not yet closed, or closed `unsettled`: what recovery must resolve. */
  unresolved(): SessionRow[];
  /** True when the journal owns this order as a session that is not closed. */
  ownsLiveOrder(orderId: string): boolean;
  sessions(opts?: { limit?: number }): SessionRow[];
  /**
   * Retention: deletes sessions closed before `before` (ms) with their intents, vends and events, in
   * transactions of at most `batch` sessions. Never deletes an open or unsettled session.
   * @returns the number of sessions deleted.
   */
  retain(before: number, batch?: number): number;
  close(): void;
}

/**
 * The durability class of each journal write (the rule, with the reasons, is src/journal/DURABILITY.md):
 * - `durable`: the write precedes an outside effect that cannot be taken back (a payment request, an
 *   approval on the VMC line); its transaction commits with a WAL fsync before that effect is launched.
 * - `deferred`: nothing outside depends on the write before the next durable commit (which makes it durable
 *   too, the WAL being appended in order), and losing it in a power cut is the same as a crash a moment
 *   earlier, which recovery rebuilds by querying the service (or by the unknown-outcome policy).
 */
export const WRITE_DURABILITY = {
  nextOrderId: "deferred",
  openSession: "deferred",
  recordIntent: "durable",
  completeIntent: "deferred",
  setPaymentId: "deferred",
  approveVend: "durable",
  recordVend: "deferred",
  decide: "durable",
  closeSession: "deferred",
  flag: "deferred",
  event: "deferred",
  retain: "deferred",
  report: "deferred",
  markDelivered: "deferred",
  renumberOutbox: "deferred",
  resendOutbox: "deferred",
  backfillOutbox: "deferred",
} as const satisfies Record<string, "durable" | "deferred">;

export type JournalWrite = keyof typeof WRITE_DURABILITY;

export type VendOutcome = "success" | "failure" | "unknown" | "cancelled";

export interface VendRow {
  id: number;
  item: number;
  price: Minor;
  outcome: VendOutcome | null;
}

export interface NewSession {
  id: string;
  orderId: string;
  flow: "selection" | "checkin";
  item: number;
  price: Minor;
  driver: string;
  /** A plan vend's member (driver `plan`, issue 18), recorded with the session in the same write. */
  member?: PlanMember | undefined;
}

/**
 * The `driver` of a plan vend's session: no payment, the member's entitlement covers it. Its result is
 * `captured` when delivered (or outcome unknown) and `cancelled` when not; nothing is captured anywhere,
 * so the fleet counts it per member and never as money received.
 */
export const PLAN_DRIVER = "plan";

/**
 * The member a plan vend was granted to: ids and the badge *hash* only (never a UID), and the day and month
 * (in the entitlement list's time zone, at the grant) whose allowances the vend counts against.
 */
export interface PlanMember {
  memberId: string;
  planId: string;
  /** The badge hash (src/update/entitlements.ts badgeHash). */
  badge: string;
  /** YYYY-MM-DD */
  day: string;
  /** YYYY-MM */
  month: string;
}

/** Counted plan vends of a member in one period. */
export interface PlanUsage {
  items: number;
  amount: Minor;
}

export type IntentOp = "start" | "capture" | "cancel" | "refund";

export interface NewIntent {
  sessionId: string;
  op: IntentOp;
  orderId: string;
  paymentId: string | null;
  amount: Minor;
}

export interface Intent extends NewIntent {
  id: number;
  idempotencyKey: string;
  state: "pending" | "done" | "failed";
  createdAt: number;
}

export interface Decision {
  action: SettleAction;
  amount: Minor;
  reason: string;
  review: boolean;
}

export interface SessionRow {
  id: string;
  orderId: string;
  flow: string;
  item: number;
  price: Minor;
  driver: string;
  paymentId: string | null;
  openedAt: number;
  approvedAmount: Minor | null;
  vendOutcome: VendOutcome | null;
  decision: Decision | null;
  result: SessionResult | null;
  reason: string | null;
  closedAt: number | null;
}

/**
 * Why a journal cannot be used at start (`JournalError` code `unusable`), or `in use` (code `locked`). Short,
 * lower case: the daemon shows it on the unit's screen ("out of service: journal corrupt").
 */
export type JournalCause =
  | "corrupt"
  | "not a journal"
  | "schema newer"
  | "data lost"
  | "disk full"
  | "not writable"
  | "not a directory"
  | "no directory"
  | "not a file"
  | "i/o error"
  | "in use"
  | "wrong build";

/** A journal that cannot be used, as the operator needs to see it. */
export interface JournalProblem {
  /** The journal file. */
  path: string;
  cause: JournalCause;
  /** What was found (SQLite's message, the check that failed); never a secret. */
  detail: string;
  /** One or two sentences: what to do (docs/operators.md, "Recovering a unit"). */
  nextStep: string;
}

/**
 * Codes: `durability` (WAL/FULL not in effect), `io` (a write failed: nothing was recorded), `integrity`,
 * `unknownSession`; and from opening a journal file: `locked` (another process owns it: exit at once) and
 * `unusable` (the start check refused it; the file was left untouched).
 *
 * For `locked` and `unusable`, `path`, `nextStep` and `problem` are set and `cause` is the short
 * {@link JournalCause} string (the contract with the daemon, which displays it); the SQLite or file-system
 * error that led there is `underlying`. For the other codes `cause` is the underlying error, as usual.
 */
export class JournalError extends Error {
  override readonly name = "JournalError";
  /** The journal file (set for `locked` and `unusable`). */
  readonly path: string | undefined;
  /** What the operator should do (set for `locked` and `unusable`). */
  readonly nextStep: string | undefined;
  /** The whole problem, typed (set for `locked` and `unusable`). */
  readonly problem: JournalProblem | undefined;
  /** The error that led to a `locked`/`unusable` refusal, if any. */
  readonly underlying: unknown;

  constructor(
    readonly code: "durability" | "io" | "integrity" | "unknownSession" | "locked" | "unusable",
    message: string,
    options?: { cause?: unknown; problem?: JournalProblem; underlying?: unknown },
  ) {
    const problem = options?.problem;
    const cause = problem ? problem.cause : options?.cause;
    super(message, cause === undefined ? undefined : { cause });
    this.problem = problem;
    this.path = problem?.path;
    this.nextStep = problem?.nextStep;
    this.underlying = options?.underlying;
  }

  /** A journal the start check refused: `journal PATH: CAUSE (DETAIL). NEXT STEP` */
  static unusable(problem: JournalProblem, underlying?: unknown): JournalError {
    return new JournalError(
      problem.cause === "in use" ? "locked" : "unusable",
      problem.cause === "in use"
        ? `journal ${problem.path} is in use by ${problem.detail}. ${problem.nextStep}`
        : `journal ${problem.path}: ${problem.cause} (${problem.detail}). ${problem.nextStep}`,
      { problem, underlying },
    );
  }
}

/** The reason prefix of a session whose settlement conflicts with what the service already did. */
export const CONFLICT_PREFIX = "conflict: ";

/** True for a session closed `unsettled` because the service did the opposite of its decision. */
export function isConflict(s: Pick<SessionRow, "result" | "reason">): boolean {
  return s.result === "unsettled" && (s.reason ?? "").startsWith(CONFLICT_PREFIX);
}
