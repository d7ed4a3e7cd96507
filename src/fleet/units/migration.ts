/**
 * The units feature's tables, created by migration `0001_fleet` (the composition, src/fleet/database.ts,
 * runs them in their place in it): the enrolled units, and the signed requests' nonces kept against replays.
 */
import { type Kysely, sql } from "kysely";

/** Migration `0001_fleet`, first step: the units (db/schema.ts `UnitsTable`). */
export async function unitsTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("units")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("public_key", "text", (c) => c.notNull().unique())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("enrolled_at", "bigint", (c) => c.notNull())
    .addColumn("decided_by", "text")
    .addColumn("decided_at", "bigint")
    .addColumn("committed_seq", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_seen_at", "bigint")
    .addColumn("last_heartbeat", "text")
    .addColumn("config_version", "text")
    .addColumn("release_version", "text")
    .addColumn("backlog_events", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("backlog_oldest_at", "bigint")
    .addColumn("unresolved", "bigint", (c) => c.notNull().defaultTo(0))
    .addCheckConstraint("units_status", sql`status in ('pending', 'approved', 'revoked')`)
    .execute();
}

/** Migration `0001_fleet`: the (key, nonce) pairs of signed requests until their window has passed. */
export async function noncesTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("nonces")
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("nonce", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("nonces_pk", ["public_key", "nonce"])
    .execute();
  await db.schema.createIndex("nonces_expiry").on("nonces").column("expires_at").execute();
}
