/** The reconciliation feature's tables: runs and their lines (`0001_fleet`), lines' currency (`0004_sales_currency`). */
import type { Kysely } from "kysely";
import { type FleetDialect, serialType } from "../db/migrator.js";

/** Migration `0001_fleet`, last step: reconciliation runs and lines. */
export async function reconTables(db: Kysely<unknown>, dialect: FleetDialect): Promise<void> {
  await db.schema
    .createTable("recon_runs")
    .addColumn("id", serialType(dialect), (c) => c.primaryKey())
    .addColumn("run_at", "bigint", (c) => c.notNull())
    .addColumn("from_day", "text", (c) => c.notNull())
    .addColumn("to_day", "text", (c) => c.notNull())
    .addColumn("clean", "integer", (c) => c.notNull())
    .addColumn("summary", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("recon_lines")
    .addColumn("id", serialType(dialect), (c) => c.primaryKey())
    .addColumn("run_id", "integer", (c) => c.notNull().references("recon_runs.id"))
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("class", "text", (c) => c.notNull())
    .addColumn("unit_id", "text")
    .addColumn("session_id", "text")
    .addColumn("order_id", "text")
    .addColumn("reference", "text")
    .addColumn("expected", "bigint")
    .addColumn("reported", "bigint")
    .addColumn("reason", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("recon_lines_run").on("recon_lines").columns(["run_id", "day"]).execute();
}

/**
 * Migration `0004_sales_currency` (issue 30), first step: reconciliation lines record their currency (older runs'
 * lines stay NULL: they were never compared by currency).
 */
export async function reconLinesCurrency(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("recon_lines").addColumn("currency", "text").execute();
}
