/**
 * The unit API's statements on PostgreSQL (db/unitStatements.ts `HotPath`). The unit lookup and the nonce insert are
 * one statement (a data-modifying CTE); a heartbeat's claim and its update are one statement too
 * (`claimHeartbeat`: heartbeats are 5 of every 6 requests of the bench), and the statements are named, so
 * each connection of the light pool (`synchronous_commit = off`: db/asyncCommit.ts) parses and plans them once. A
 * heartbeat is one round trip instead of three, never re-planned. When heartbeats queue up
 * (HEARTBEATS_IN_FLIGHT statements out already: a burst), the waiting ones go as one statement
 * (CLAIM_HEARTBEATS_SQL, db/statementBatcher.ts), which costs the database and the process a fraction of one
 * statement each. A batch of events is one statement as well, with its request's claim in it
 * (`claimIngestRun`; `ingestRun` alone when the claim had to come first): one durable commit a batch.
 */
import pg from "pg";
import type { SalesTable } from "./schema.js";
import { coalescer } from "./statementBatcher.js";
import {
  type HeartbeatClaim,
  type HeartbeatRow,
  type HotPath,
  heartbeatValues,
  type IngestRun,
  type UnitAuthRow,
} from "./unitStatements.js";

/**
 * Every claim's first two parts: `u` the unit of the key `key` (a parameter), `n` the nonce recorded for a
 * known key (or when `enrol`, a boolean parameter, is true), returning a row only if it was fresh.
 */
const claimCtes = (key: string, nonce: string, expiresAt: string, enrol?: string) => `
with u as (
  select id, status, committed_seq from units where public_key = ${key}
), n as (
  insert into nonces (public_key, nonce, expires_at)
  select ${key}, ${nonce}, ${expiresAt} where ${enrol === undefined ? "" : `${enrol}::boolean or `}exists (select 1 from u)
  on conflict (public_key, nonce) do nothing
  returning 1
)`;

const CLAIM_SQL = `${claimCtes("$1", "$2", "$3", "$4")}
select (select count(*) from n)::int as fresh, u.id, u.status, u.committed_seq
from (select 1) as one left join u on true`;

const HEARTBEAT_SQL = `
update units set last_seen_at = $2, last_heartbeat = $3, config_version = $4, release_version = $5,
  backlog_events = $6, backlog_oldest_at = $7, unresolved = $8
where id = $1
returning committed_seq`;

/**
 * CLAIM_SQL and HEARTBEAT_SQL in one statement. The update sees the nonce insert's RETURNING row, so it runs
 * only for a fresh nonce; it matches only the key's own unit, still approved when its row is locked (a
 * revocation committed meanwhile leaves it matching nothing). All parts see one snapshot: `u` is the unit
 * as it was before the heartbeat, which is what the claim answers anyway.
 */
const CLAIM_HEARTBEAT_SQL = `${claimCtes("$1", "$2", "$3")}, h as (
  update units set last_seen_at = $5, last_heartbeat = $6, config_version = $7, release_version = $8,
    backlog_events = $9, backlog_oldest_at = $10, unresolved = $11
  where id = $4 and public_key = $1 and status = 'approved' and exists (select 1 from n)
  returning committed_seq
)
select (select count(*) from n)::int as fresh, u.id, u.status, u.committed_seq,
  (select committed_seq from h) as heartbeat_committed
from (select 1) as one left join u on true`;

/**
 * CLAIM_HEARTBEAT_SQL for several heartbeats of distinct keys at once (db/statementBatcher.ts), with the same
 * decisions row by row: `i` the heartbeats (one array element each), `u` each key's unit (a lookup by index
 * per row: `offset 0` keeps it a nested loop), `n` the fresh nonces of known keys, `h` the updates for fresh
 * nonces whose key's unit is the body's unit and approved. With distinct keys each join below matches at
 * most once, and no unit row is updated twice.
 */
const CLAIM_HEARTBEATS_SQL = `
with i as (
  select * from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[],
    $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[]) with ordinality
  as t(public_key, nonce, expires_at, unit_id, last_seen_at, last_heartbeat, config_version,
    release_version, backlog_events, backlog_oldest_at, unresolved, ord)
), u as (
  select i.ord, x.id, x.status, x.committed_seq
  from i cross join lateral (
    select id, status, committed_seq from units where units.public_key = i.public_key offset 0
  ) as x
), n as (
  insert into nonces (public_key, nonce, expires_at)
  select i.public_key, i.nonce, i.expires_at from i join u on u.ord = i.ord
  on conflict (public_key, nonce) do nothing
  returning public_key
), h as (
  update units set last_seen_at = i.last_seen_at, last_heartbeat = i.last_heartbeat,
    config_version = i.config_version, release_version = i.release_version,
    backlog_events = i.backlog_events, backlog_oldest_at = i.backlog_oldest_at, unresolved = i.unresolved
  from i join n on n.public_key = i.public_key
  where units.id = i.unit_id and units.public_key = i.public_key and units.status = 'approved'
  returning i.ord, units.committed_seq
)
select i.ord::int as ord, (n.public_key is not null)::int as fresh, u.id, u.status, u.committed_seq,
  h.committed_seq as heartbeat_committed
from i left join u on u.ord = i.ord left join n on n.public_key = i.public_key left join h on h.ord = i.ord
order by i.ord`;

/** Heartbeat statements out at once per process; further heartbeats wait and then go together. */
export const HEARTBEATS_IN_FLIGHT = 2;
/** The most heartbeats in one statement. */
export const HEARTBEATS_PER_STATEMENT = 64;

/** One claimHeartbeat call. */
interface HeartbeatCall {
  publicKey: string;
  nonce: string;
  expiresAt: number;
  unitId: string;
  row: HeartbeatRow;
}

/**
 * PostgreSQL errors that prove a statement was rolled back, so its heartbeats may be sent again one by one:
 * its values refused (SQLSTATE class 22 data exception, 23 integrity constraint, 54 program limit), or a
 * deadlock or serialization failure (40P01, 40001: two statements holding the same units' rows in opposite
 * order, as a unit's retry and its original heartbeat could; one by one, each locks one row).
 */
export function rolledBack(err: unknown): boolean {
  return err instanceof pg.DatabaseError && /^(22...|23...|54...|40P01|40001)$/.test(err.code ?? "");
}

/** The sales columns a run writes, in the order of INGEST_SQL's record type. */
const SALES_COLUMNS = [
  ["seq", "bigint"],
  ["session_id", "text"],
  ["order_id", "text"],
  ["payment_id", "text"],
  ["driver", "text"],
  ["flow", "text"],
  ["item", "integer"],
  ["price", "bigint"],
  ["result", "text"],
  ["approved", "bigint"],
  ["captured", "bigint"],
  ["refunded", "bigint"],
  ["currency", "text"],
  ["vends_ok", "integer"],
  ["vends_failed", "integer"],
  ["opened_at", "bigint"],
  ["closed_at", "bigint"],
  ["day", "text"],
  ["member_id", "text"],
  ["plan_id", "text"],
] as const satisfies readonly (readonly [keyof SalesTable, string])[];

/** INGEST_SQL's inserts of the run's events and sales rows, which run only if the CTE `guard` matched. */
const runInserts = (guard: string) => `
e as (
  insert into events (unit_id, seq, at, kind, data, received_at)
  select $1, x.seq, x.at, x.kind, x.data, $4
  from jsonb_to_recordset($5::jsonb) as x(seq bigint, at bigint, kind text, data text)
  where exists (select 1 from ${guard})
  returning 1
), s as (
  insert into sales (unit_id, ${SALES_COLUMNS.map(([c]) => c).join(", ")})
  select $1, ${SALES_COLUMNS.map(([c]) => `r.${c}`).join(", ")}
  from jsonb_to_recordset($6::jsonb) as r(${SALES_COLUMNS.map(([c, t]) => `${c} ${t}`).join(", ")})
  where exists (select 1 from ${guard})
  on conflict (unit_id, session_id) do update set
    ${SALES_COLUMNS.filter(([c]) => c !== "session_id")
      .map(([c]) => `${c} = excluded.${c}`)
      .join(", ")}
  where sales.seq < excluded.seq
  returning 1
)`;

/**
 * ingest/store.ts's batch in one statement. The unit row's update is the guard: it matches only while the
 * committed seq is `$2` (a concurrent batch of the unit waits for this one's row lock, then matches
 * nothing), and the inserts run only if it matched. An event already stored breaks the primary key and
 * fails the whole statement, as the transaction of ingest/store.ts would. Sales rows: the upsert of
 * ingest/store.ts's `upsertSales` (a later report of a session replaces its row).
 */
const INGEST_SQL = `
with u as (
  update units set committed_seq = $3, last_seen_at = $4 where id = $1 and committed_seq = $2 returning 1
), ${runInserts("u")}
select (select count(*) from u)::int as applied, (select count(*) from e)::int as stored`;

/**
 * CLAIM_SQL and INGEST_SQL in one statement, for an events request (`claimIngestRun`): `$7`-`$9` are the
 * key, the nonce and its expiry. The nonce is recorded as CLAIM_SQL records it for a known key; the guard
 * `g` matches only the key's own unit (`$1` is the body's unit id), approved and at committed seq `$2` when
 * its row is locked, and only for a fresh nonce. `u` is the unit as the statement's snapshot saw it.
 */
const CLAIM_INGEST_SQL = `${claimCtes("$7", "$8", "$9")}, g as (
  update units set committed_seq = $3, last_seen_at = $4
  where id = $1 and public_key = $7 and status = 'approved' and committed_seq = $2 and exists (select 1 from n)
  returning 1
), ${runInserts("g")}
select (select count(*) from n)::int as fresh, u.id, u.status, u.committed_seq,
  (select count(*) from g)::int as applied, (select count(*) from e)::int as stored
from (select 1) as one left join u on true`;

/** INGEST_SQL's values `$1`-`$6` for `run`. */
function runValues(run: IngestRun): unknown[] {
  return [
    run.unitId,
    run.expected,
    run.committed,
    run.now,
    JSON.stringify(run.events),
    JSON.stringify(run.sales),
  ];
}

/** The row CLAIM_SQL, CLAIM_HEARTBEAT_SQL and CLAIM_INGEST_SQL answer: the nonce's freshness and the key's unit, if any. */
interface ClaimRow {
  fresh: number;
  id: string | null;
  status: UnitAuthRow["status"] | null;
  committed_seq: number | null;
}

function claimOf(row: ClaimRow | undefined): { unit: UnitAuthRow | null; fresh: boolean } {
  if (row === undefined) throw new Error("unit claim returned no row");
  const unit =
    row.id === null || row.status === null
      ? null
      : { id: row.id, status: row.status, committed_seq: Number(row.committed_seq ?? 0) };
  return { unit, fresh: row.fresh > 0 };
}

/** Options of postgresHotPath. */
export interface PostgresHotPathOptions {
  /** Told the number of heartbeats in each heartbeat statement sent (db/statementBatcher.ts `onSend`). */
  onHeartbeatStatement?(size: number): void;
}

/** PostgreSQL: named statements on `light` (the light pool) and, for ingest, on `durable` (the main one). */
export function postgresHotPath(
  pool: pg.Pool,
  durable?: pg.Pool,
  opts: PostgresHotPathOptions = {},
): HotPath {
  const claimOne = async (c: HeartbeatCall): Promise<HeartbeatClaim> => {
    const r = await pool.query<ClaimRow & { heartbeat_committed: number | null }>({
      name: "vendd_unit_claim_heartbeat",
      text: CLAIM_HEARTBEAT_SQL,
      values: [c.publicKey, c.nonce, c.expiresAt, c.unitId, ...heartbeatValues(c.row)],
    });
    const row = r.rows[0];
    const committed = row?.heartbeat_committed == null ? null : Number(row.heartbeat_committed);
    return { ...claimOf(row), committed };
  };
  const claimMany = async (calls: readonly HeartbeatCall[]): Promise<HeartbeatClaim[]> => {
    const columns: unknown[][] = Array.from({ length: 11 }, () => []);
    for (const c of calls) {
      const values = [c.publicKey, c.nonce, c.expiresAt, c.unitId, ...heartbeatValues(c.row)];
      values.forEach((v, j) => {
        columns[j]?.push(v);
      });
    }
    const r = await pool.query<ClaimRow & { ord: number; heartbeat_committed: number | null }>({
      name: "vendd_unit_claim_heartbeats",
      text: CLAIM_HEARTBEATS_SQL,
      values: columns,
    });
    if (r.rows.length !== calls.length || r.rows.some((row, i) => row.ord !== i + 1))
      throw new Error(`heartbeat statement answered ${r.rows.length} rows for ${calls.length} heartbeats`);
    return r.rows.map((row) => ({
      ...claimOf(row),
      committed: row.heartbeat_committed == null ? null : Number(row.heartbeat_committed),
    }));
  };
  const claimHeartbeat = coalescer<HeartbeatCall, HeartbeatClaim>({
    maxInFlight: HEARTBEATS_IN_FLIGHT,
    maxBatch: HEARTBEATS_PER_STATEMENT,
    key: (c) => c.publicKey,
    one: claimOne,
    many: claimMany,
    wroteNothing: rolledBack,
    ...(opts.onHeartbeatStatement === undefined ? {} : { onSend: opts.onHeartbeatStatement }),
  });
  return {
    ...(durable === undefined
      ? {}
      : {
          async ingestRun(run: IngestRun) {
            const r = await durable.query<{ applied: number; stored: number }>({
              name: "vendd_ingest_run",
              text: INGEST_SQL,
              values: runValues(run),
            });
            const row = r.rows[0];
            if (row === undefined || row.applied === 0) return false;
            if (row.stored !== run.events.length)
              throw new Error(`unit ${run.unitId}: ${row.stored} of ${run.events.length} events stored`);
            return true;
          },
        }),
    ...(durable === undefined
      ? {}
      : {
          async claimIngestRun(publicKey: string, nonce: string, expiresAt: number, run: IngestRun) {
            const r = await durable.query<ClaimRow & { applied: number; stored: number }>({
              name: "vendd_unit_claim_ingest_run",
              text: CLAIM_INGEST_SQL,
              values: [...runValues(run), publicKey, nonce, expiresAt],
            });
            const row = r.rows[0];
            const applied = row !== undefined && row.applied > 0;
            if (applied && row.stored !== run.events.length)
              throw new Error(`unit ${run.unitId}: ${row.stored} of ${run.events.length} events stored`);
            return { ...claimOf(row), applied };
          },
        }),
    async claimNonce(publicKey, nonce, expiresAt, enrol) {
      const r = await pool.query<ClaimRow>({
        name: "vendd_unit_claim",
        text: CLAIM_SQL,
        values: [publicKey, nonce, expiresAt, enrol],
      });
      return claimOf(r.rows[0]);
    },
    claimHeartbeat: (publicKey, nonce, expiresAt, unitId, row) =>
      claimHeartbeat({ publicKey, nonce, expiresAt, unitId, row }),
    async heartbeat(unitId, h) {
      const r = await pool.query<{ committed_seq: number }>({
        name: "vendd_unit_heartbeat",
        text: HEARTBEAT_SQL,
        values: [unitId, ...heartbeatValues(h)],
      });
      const row = r.rows[0];
      return row === undefined ? null : Number(row.committed_seq);
    },
  };
}
