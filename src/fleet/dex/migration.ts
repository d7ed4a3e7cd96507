/**
 * Fleet migration "0006_dex" (issue 36): each DEX read a unit sent, once per unit and read id, with the
 * parsed since-init counters the three-way reconciliation uses and the raw file.
 */
import type { Kysely } from "kysely";

export async function dexMigrationUp(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("dex_reads")
    .addColumn("unit_id", "text", (c) => c.notNull().references("units.id"))
    .addColumn("read_id", "text", (c) => c.notNull())
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("trigger", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("counters", "text")
    .addColumn("raw", "text")
    .addColumn("error", "text")
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("dex_reads_pk", ["unit_id", "read_id"])
    .execute();
  await db.schema.createIndex("dex_reads_unit_at").on("dex_reads").columns(["unit_id", "at"]).execute();
}

/**
 * Fleet migration "0008_dex_g85" (issue 42): each read's G85 result (`ok|swapped|bad|absent`, null before
 * this migration or for a failed read), so a read whose file failed its check is kept but unverified; and the
 * machines a manager marked as having a G85 that is always wrong (their reads are then used, and the report
 * says so).
 */
export async function dexG85Up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("dex_reads").addColumn("g85", "text").execute();
  await db.schema
    .createTable("dex_g85_marks")
    .addColumn("unit_id", "text", (c) => c.primaryKey().references("units.id"))
    .addColumn("marked_by", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("marked_at", "bigint", (c) => c.notNull())
    .execute();
}
