/** The ingest feature's table, created by migration `0001_fleet`: every event a unit sent, once. */
import type { Kysely } from "kysely";

/** Migration `0001_fleet`: the units' events (db/schema.ts `EventsTable`). */
export async function eventsTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("events")
    .addColumn("unit_id", "text", (c) => c.notNull().references("units.id"))
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("events_pk", ["unit_id", "seq"])
    .execute();
  await db.schema.createIndex("events_kind_at").on("events").columns(["kind", "at"]).execute();
}
