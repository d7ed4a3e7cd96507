/**
 * Writes that need not wait for the disk. The fleet acknowledges a unit's events only after their
 * transaction is durable (SQLite `synchronous=FULL`, PostgreSQL's default `synchronous_commit`), because the
 * unit then forgets them. A heartbeat's update and a request's nonce are different: losing the last few to a
 * power cut of the fleet host costs nothing a unit's next heartbeat does not restore, so they commit without
 * their own fsync (SQLite `synchronous=NORMAL` for that transaction, which the next durable commit or
 * checkpoint makes durable, the WAL being appended in order; PostgreSQL `SET LOCAL synchronous_commit = off`).
 * With 10,000 units' heartbeats a minute this is the difference between one fsync per request and almost
 * none (scripts/bench-fleet.ts).
 */
import { type Kysely, sql, type Transaction } from "kysely";
import type { FleetDialect } from "./migrator.js";
import type { FleetDatabase } from "./schema.js";

/**
 * One light write statement (or a few that need not be atomic together). PostgreSQL with a light pool
 * (`FleetDb.light`, sessions at `synchronous_commit = off`): the statement runs there on its own, one round
 * trip. Otherwise as {@link lightTransaction}.
 */
export async function lightWrite<T>(
  ctx: { db: Kysely<FleetDatabase>; lightDb?: Kysely<FleetDatabase>; dialect: FleetDialect },
  fn: (db: Kysely<FleetDatabase> | Transaction<FleetDatabase>) => Promise<T>,
): Promise<T> {
  if (ctx.dialect === "postgres" && ctx.lightDb !== undefined && ctx.lightDb !== ctx.db)
    return fn(ctx.lightDb);
  return lightTransaction(ctx.db, ctx.dialect, fn);
}

export async function lightTransaction<T>(
  db: Kysely<FleetDatabase>,
  dialect: FleetDialect,
  fn: (trx: Transaction<FleetDatabase>) => Promise<T>,
): Promise<T> {
  if (dialect === "postgres") {
    return db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      return fn(trx);
    });
  }
  // SQLite: one connection; holding it keeps every other query out until `synchronous` is FULL again.
  return db.connection().execute(async (conn) => {
    await sql`pragma synchronous = NORMAL`.execute(conn);
    try {
      return await conn.transaction().execute(fn);
    } finally {
      await sql`pragma synchronous = FULL`.execute(conn);
    }
  });
}
