/** The bundles feature's tables: created by migration `0001_fleet`, `verified` added by `0005_bundle_verified`. */
import type { Kysely } from "kysely";
import { bytesType, type FleetDialect } from "../db/migrator.js";

/** Migration `0001_fleet`: the uploaded bundles and their rollout state per unit. */
export async function bundlesTables(db: Kysely<unknown>, dialect: FleetDialect): Promise<void> {
  await db.schema
    .createTable("bundles")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("targets", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint")
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("size", "bigint", (c) => c.notNull())
    .addColumn("bytes", bytesType(dialect), (c) => c.notNull())
    .addColumn("uploaded_by", "text", (c) => c.notNull())
    .addColumn("uploaded_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("rollouts")
    .addColumn("bundle_id", "text", (c) => c.notNull().references("bundles.id"))
    .addColumn("unit_id", "text", (c) => c.notNull().references("units.id"))
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("rollouts_pk", ["bundle_id", "unit_id"])
    .execute();
}

/**
 * Migration `0005_bundle_verified` (issue 33): whether the fleet checked a bundle's signature against its own
 * bundle keys at upload (1) or had none to check with (0: shown unverified). Bundles stored before are unverified.
 */
export async function bundleVerifiedColumn(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("bundles")
    .addColumn("verified", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
