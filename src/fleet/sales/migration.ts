/** The sales feature's table and its indexes: migration `0001_fleet` creates it, `0004_sales_currency` indexes it. */
import type { Kysely } from "kysely";

/** Migration `0001_fleet`: one row per (unit, session) (db/schema.ts `SalesTable`). */
export async function salesTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("sales")
    .addColumn("unit_id", "text", (c) => c.notNull().references("units.id"))
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("session_id", "text", (c) => c.notNull())
    .addColumn("order_id", "text", (c) => c.notNull())
    .addColumn("payment_id", "text")
    .addColumn("driver", "text", (c) => c.notNull())
    .addColumn("flow", "text", (c) => c.notNull())
    .addColumn("item", "integer", (c) => c.notNull())
    .addColumn("price", "bigint", (c) => c.notNull())
    .addColumn("result", "text", (c) => c.notNull())
    .addColumn("approved", "bigint", (c) => c.notNull())
    .addColumn("captured", "bigint", (c) => c.notNull())
    .addColumn("refunded", "bigint", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("vends_ok", "integer", (c) => c.notNull())
    .addColumn("vends_failed", "integer", (c) => c.notNull())
    .addColumn("opened_at", "bigint", (c) => c.notNull())
    .addColumn("closed_at", "bigint", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("member_id", "text")
    .addColumn("plan_id", "text")
    .addPrimaryKeyConstraint("sales_pk", ["unit_id", "seq"])
    .execute();
  // A session reported again replaces its row (schema.ts): one row per (unit, session).
  await db.schema
    .createIndex("sales_unit_session")
    .on("sales")
    .columns(["unit_id", "session_id"])
    .unique()
    .execute();
  await db.schema.createIndex("sales_day").on("sales").columns(["day", "unit_id"]).execute();
  await db.schema.createIndex("sales_order").on("sales").column("order_id").execute();
  await db.schema.createIndex("sales_payment").on("sales").column("payment_id").execute();
}

/** Migration `0004_sales_currency`, second step: totals per day and currency read an index. */
export async function salesCurrencyIndex(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("sales_day_currency").on("sales").columns(["day", "currency"]).execute();
}
