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
