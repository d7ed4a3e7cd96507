/**
 * The unit API's statements on SQLite (db/unitStatements.ts `HotPath`). In process there are no round trips, but
 * Kysely's per-query work (compiling, an await per statement) was most of the cost: the statements are
 * prepared once and run synchronously on the connection, while holding Kysely's lock on it (so never inside
 * another request's open transaction). The nonce insert and the heartbeat are light transactions
 * (db/asyncCommit.ts: `synchronous = NORMAL` for them), one for both in a heartbeat.
 */
import type Database from "better-sqlite3";
import type { Kysely } from "kysely";
import type { FleetDatabase } from "./schema.js";
import { type HotPath, heartbeatValues, type UnitAuthRow } from "./unitStatements.js";

/** SQLite: prepared statements on `file`, the connection under `db` (its only one). */
export function sqliteHotPath(db: Kysely<FleetDatabase>, file: Database.Database): HotPath {
  const normal = file.prepare("pragma synchronous = NORMAL");
  const full = file.prepare("pragma synchronous = FULL");
  const begin = file.prepare("begin");
  const commit = file.prepare("commit");
  const rollback = file.prepare("rollback");
  const unitOf = file.prepare<[string], UnitAuthRow>(
    "select id, status, committed_seq from units where public_key = ?",
  );
  const insertNonce = file.prepare<[string, string, number]>(
    "insert into nonces (public_key, nonce, expires_at) values (?, ?, ?) on conflict (public_key, nonce) do nothing",
  );
  const heartbeat = file.prepare<
    [number, string, string | null, string | null, number, number | null, number, string],
    { committed_seq: number }
  >(
    `update units set last_seen_at = ?, last_heartbeat = ?, config_version = ?, release_version = ?,
      backlog_events = ?, backlog_oldest_at = ?, unresolved = ? where id = ? returning committed_seq`,
  );
  /** One light transaction: committed without its own fsync (db/asyncCommit.ts). */
  const light = <T>(fn: () => T): T => {
    normal.run();
    try {
      begin.run();
      try {
        const r = fn();
        commit.run();
        return r;
      } catch (err) {
        if (file.inTransaction) rollback.run();
        throw err;
      }
    } finally {
      full.run();
    }
  };
  /** Runs `fn` holding Kysely's lock on the connection: no other query or transaction is in between. */
  const exclusive = <T>(fn: () => T): Promise<T> => db.connection().execute(async () => fn());
  return {
    claimNonce: (publicKey, nonce, expiresAt, enrol) =>
      exclusive(() => {
        const unit = unitOf.get(publicKey) ?? null;
        if (unit === null && !enrol) return { unit, fresh: false };
        const r = light(() => insertNonce.run(publicKey, nonce, expiresAt));
        return { unit, fresh: r.changes > 0 };
      }),
    heartbeat: (unitId, h) =>
      exclusive(() => {
        const row = light(() => heartbeat.get(...heartbeatValues(h), unitId));
        return row === undefined ? null : row.committed_seq;
      }),
    // One light transaction for the nonce and the heartbeat (claimNonce and heartbeat take one each).
    claimHeartbeat: (publicKey, nonce, expiresAt, unitId, h) =>
      exclusive(() => {
        const unit = unitOf.get(publicKey) ?? null;
        if (unit === null) return { unit, fresh: false, committed: null };
        return light(() => {
          const fresh = insertNonce.run(publicKey, nonce, expiresAt).changes > 0;
          if (!fresh || unit.id !== unitId || unit.status !== "approved")
            return { unit, fresh, committed: null };
          const row = heartbeat.get(...heartbeatValues(h), unitId);
          return { unit, fresh, committed: row === undefined ? null : row.committed_seq };
        });
      }),
  };
}
