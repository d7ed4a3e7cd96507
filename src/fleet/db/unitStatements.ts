/**
 * The statements every unit request runs: the key's unit and its nonce (every request), and the heartbeat's
 * update (every unit, every minute). With 10,000 units these are most of the fleet's database traffic
 * (scripts/bench-fleet.ts), so each database takes its shortest path: db/unitStatementsPostgres.ts (one named
 * statement a request, heartbeats batched in bursts) and db/unitStatementsSqlite.ts (prepared statements run
 * synchronously, light transactions). This file has what they share: the interface, the heartbeat row's
 * values, and the Kysely path for any dialect (a context built without them).
 * What they decide is the same everywhere: a nonce is recorded only for a known key or an enrolment (a
 * stranger's requests write nothing), and a (key, nonce) seen before is a replay.
 */
import type { Kysely } from "kysely";
import { lightWrite } from "./asyncCommit.js";
import type { FleetDialect } from "./migrator.js";
import type { EventsTable, FleetDatabase, SalesTable, UnitsTable } from "./schema.js";

export interface UnitAuthRow {
  id: string;
  status: UnitsTable["status"];
  committed_seq: number;
}

/** What a heartbeat writes on the unit's row. */
export interface HeartbeatRow {
  last_seen_at: number;
  last_heartbeat: string;
  config_version: string | null;
  release_version: string | null;
  backlog_events: number;
  backlog_oldest_at: number | null;
  unresolved: number;
}

export interface HotPath {
  /**
   * The unit of `publicKey` (null: not enrolled) and whether (key, nonce) was new. The nonce is recorded
   * (until `expiresAt`) only when the key is known or `enrol` is true.
   */
  claimNonce(
    publicKey: string,
    nonce: string,
    expiresAt: number,
    enrol: boolean,
  ): Promise<{ unit: UnitAuthRow | null; fresh: boolean }>;
  /** Writes a heartbeat on the unit's row; its committed seq, or null when the unit is gone. */
  heartbeat(unitId: string, row: HeartbeatRow): Promise<number | null>;
  /**
   * A heartbeat's claim and write at once (one statement on PostgreSQL: heartbeats are most requests):
   * `claimNonce(publicKey, nonce, expiresAt, false)`, and `heartbeat(unitId, row)` only if that nonce was
   * fresh and the key's unit is `unitId` and approved. `committed`: the heartbeat's answer, null when it
   * wrote nothing (the claim refused, or the unit revoked meanwhile). The nonce is recorded exactly as
   * claimNonce records it.
   */
  claimHeartbeat?(
    publicKey: string,
    nonce: string,
    expiresAt: number,
    unitId: string,
    row: HeartbeatRow,
  ): Promise<HeartbeatClaim>;
  /**
   * PostgreSQL only (ingest/store.ts's fast path): stores a run of events and its sales rows and moves the unit's
   * committed seq from `expected` to `committed`, in one statement (one durable commit), only if the unit's
   * committed seq is still `expected`. False: it was not (another batch came first), nothing was written.
   */
  ingestRun?(run: IngestRun): Promise<boolean>;
  /**
   * PostgreSQL only: an events request's claim and its run at once (one statement, one durable commit):
   * `claimNonce(publicKey, nonce, expiresAt, false)`, and `ingestRun(run)` only if that nonce was fresh and
   * the key's unit is `run.unitId`, approved and still at committed seq `run.expected`. The nonce is
   * recorded exactly as claimNonce records it, whether the run was stored or not.
   */
  claimIngestRun?(publicKey: string, nonce: string, expiresAt: number, run: IngestRun): Promise<IngestClaim>;
}

/** What claimIngestRun decided: the claim's answer, and whether the run was stored. */
export interface IngestClaim {
  unit: UnitAuthRow | null;
  fresh: boolean;
  applied: boolean;
}

/** What claimHeartbeat decided: the claim's answer, and the heartbeat's committed seq if it was written. */
export interface HeartbeatClaim {
  unit: UnitAuthRow | null;
  fresh: boolean;
  committed: number | null;
}

/** A run of events that continues a unit's committed seq, ready to store (ingest/store.ts). */
export interface IngestRun {
  unitId: string;
  /** The unit's committed seq the run continues. */
  expected: number;
  /** The run's last seq: the unit's committed seq after it. */
  committed: number;
  now: number;
  events: readonly Omit<EventsTable, "unit_id" | "received_at">[];
  sales: readonly Omit<SalesTable, "unit_id">[];
}

/** A heartbeat row's values in the order both dialects' update statements name them. */
export function heartbeatValues(
  h: HeartbeatRow,
): [number, string, string | null, string | null, number, number | null, number] {
  return [
    h.last_seen_at,
    h.last_heartbeat,
    h.config_version,
    h.release_version,
    h.backlog_events,
    h.backlog_oldest_at,
    h.unresolved,
  ];
}

/** Any dialect through Kysely (SQLite, and a context built without the PostgreSQL light pool). */
export function kyselyHotPath(ctx: {
  db: Kysely<FleetDatabase>;
  lightDb?: Kysely<FleetDatabase>;
  dialect: FleetDialect;
}): HotPath {
  return {
    async claimNonce(publicKey, nonce, expiresAt, enrol) {
      const unit =
        (await ctx.db
          .selectFrom("units")
          .select(["id", "status", "committed_seq"])
          .where("public_key", "=", publicKey)
          .executeTakeFirst()) ?? null;
      if (unit === null && !enrol) return { unit, fresh: false };
      const r = await lightWrite(ctx, (db) =>
        db
          .insertInto("nonces")
          .values({ public_key: publicKey, nonce, expires_at: expiresAt })
          .onConflict((oc) => oc.columns(["public_key", "nonce"]).doNothing())
          .executeTakeFirst(),
      );
      return { unit, fresh: r.numInsertedOrUpdatedRows !== 0n };
    },
    async heartbeat(unitId, row) {
      const r = await lightWrite(ctx, (db) =>
        db
          .updateTable("units")
          .set(row)
          .where("id", "=", unitId)
          .returning("committed_seq")
          .executeTakeFirst(),
      );
      return r === undefined ? null : r.committed_seq;
    },
  };
}
