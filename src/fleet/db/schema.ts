/**
 * The fleet's database, as Kysely sees it: one schema for both dialects (SQLite, the embedded default, and
 * PostgreSQL for several fleet processes). Migrations (the features' migration.ts, in the order of
 * src/fleet/database.ts) create exactly these tables; every query goes through Kysely, so there is one SQL
 * set, not two.
 *
 * Conventions, chosen so both dialects store the same values:
 * - times are epoch milliseconds in `bigint` columns (read back as JS numbers: the PostgreSQL pool parses
 *   int8 as a number, safe up to 2^53);
 * - money is integer minor units (`bigint`);
 * - booleans are integers 0/1; JSON documents are text;
 * - days are `YYYY-MM-DD` strings in the fleet's reporting time zone.
 */
import type { ColumnType, Generated } from "kysely";

export interface UnitsTable {
  /** The unit id from the unit's config (`unit.id`). */
  id: string;
  /** The unit's Ed25519 public key, raw base64url (fleetAuth.ts). Unique. */
  public_key: string;
  fingerprint: string;
  label: string;
  status: "pending" | "approved" | "revoked";
  enrolled_at: number;
  /** Manager who approved or revoked, and when. */
  decided_by: string | null;
  decided_at: number | null;
  /** Highest seq with every event 1..committed_seq stored (0 at enrolment, the column's default). */
  committed_seq: Generated<number>;
  last_seen_at: number | null;
  /** The last heartbeat, as the unit sent it (JSON of fleetWire `Heartbeat`). */
  last_heartbeat: string | null;
  config_version: string | null;
  release_version: string | null;
  backlog_events: Generated<number>;
  backlog_oldest_at: number | null;
  unresolved: Generated<number>;
}

export interface EventsTable {
  unit_id: string;
  seq: number;
  at: number;
  kind: "session" | "fault" | "service" | "version" | "dex";
  /** The event's `data`, JSON. */
  data: string;
  received_at: number;
}

/**
 * One row per session: what the sales pages and reconciliation read. A session reported again (an
 * `unsettled` session settled by recovery, a refund after close) replaces its row when its seq is higher:
 * the key is (unit_id, session_id), so nothing is counted twice.
 */
export interface SalesTable {
  unit_id: string;
  seq: number;
  session_id: string;
  order_id: string;
  payment_id: string | null;
  driver: "v10" | "legacy" | "sim" | "plan";
  flow: "selection" | "checkin";
  item: number;
  price: number;
  result: "captured" | "cancelled" | "denied" | "unsettled";
  approved: number;
  captured: number;
  refunded: number;
  currency: string;
  /** Vends delivered (outcome success) in the session. */
  vends_ok: number;
  vends_failed: number;
  opened_at: number;
  closed_at: number;
  /** `closed_at`'s day in the reporting time zone. */
  day: string;
  /** Plan vends (issue 18): the member and plan; null for paid sessions. */
  member_id: string | null;
  plan_id: string | null;
}

/** Units' request nonces, kept until the timestamp window has passed: replays are refused. */
export interface NoncesTable {
  public_key: string;
  nonce: string;
  expires_at: number;
}

export interface BundlesTable {
  /** The payload id from the bundle's trusted comment. */
  id: string;
  kind: "config" | "release";
  version: string;
  /** JSON array of target unit ids, or `["*"]`. */
  targets: string;
  expires_at: number | null;
  sha256: string;
  size: number;
  bytes: Uint8Array;
  uploaded_by: string;
  uploaded_at: number;
  /** 1: signed by one of the fleet's bundle keys at upload; 0: no key to check with (unverified). */
  verified: Generated<number>;
}

/**
 * A unit's progress with a bundle. `pending` (fetched), `applied` (committed) and `rolledBack` since 0001;
 * issue 41 added the rollout's states: `waiting` (its phase not released), `offered`, `verified`, `swapped`
 * (the step `applied`: in force, before the health gate), `healthy`, `refused`; and `phase` (migration
 * `0010_rollouts`: null without a rollout, -1 "update this unit now", else its phase).
 */
export interface RolloutsTable {
  bundle_id: string;
  unit_id: string;
  state:
    | "waiting"
    | "offered"
    | "pending"
    | "verified"
    | "swapped"
    | "healthy"
    | "applied"
    | "refused"
    | "rolledBack";
  reason: string;
  updated_at: number;
  phase: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  /** scrypt: `scrypt$N$r$p$salt$hash` (base64url). */
  password_hash: string;
  role: "viewer" | "manager";
  created_at: number;
}

export interface WebSessionsTable {
  /** SHA-256 (hex) of the session cookie's token: the database never holds a usable token. */
  id: string;
  user_id: number;
  csrf: string;
  created_at: number;
  expires_at: number;
}

export interface LoginAttemptsTable {
  id: Generated<number>;
  username: string;
  remote: string;
  at: number;
  ok: number;
}

/** Issue 17: one reconciliation run over a day range, with its totals. */
export interface ReconRunsTable {
  id: Generated<number>;
  run_at: number;
  from_day: string;
  to_day: string;
  /** 1 when every line matched and every transfer equals its matched lines. */
  clean: number;
  /** JSON summary: counts per class, per-transfer expected/received/difference. */
  summary: string;
}

export interface ReconLinesTable {
  id: Generated<number>;
  run_id: number;
  day: string;
  /** matched, missingInReport, unknownInFleet, amountMismatch, refundMatched, refundUnmatched, fee, transfer. */
  class: string;
  unit_id: string | null;
  session_id: string | null;
  order_id: string | null;
  /** The report's transaction or transfer reference. */
  reference: string | null;
  expected: number | null;
  reported: number | null;
  /** ISO 4217 code of expected/reported (migration 0004_sales_currency); null for older runs. */
  currency: string | null;
  reason: string;
}

/**
 * The tables every query sees. Features add their own tables to it where they declare them, by TypeScript's
 * interface merging (`declare module "./schema.js"`, as Fastify's plugins decorate its types), so db/
 * imports no feature: plans/schema.ts and dex/schema.ts do.
 */
export interface FleetDatabase {
  units: UnitsTable;
  events: EventsTable;
  sales: SalesTable;
  nonces: NoncesTable;
  bundles: BundlesTable;
  rollouts: RolloutsTable;
  users: UsersTable;
  web_sessions: WebSessionsTable;
  login_attempts: LoginAttemptsTable;
  recon_runs: ReconRunsTable;
  recon_lines: ReconLinesTable;
}
