/**
 * Migration `0011_alert_silences` (issue 42): silences and maintenance windows (`alert_silences`), and on
 * each change the silence that kept it from being sent (`alert_changes.silenced_by`); on each alert whether
 * its last message was silenced (`alerts.silenced`: sent at the first evaluation after the silence ends).
 * The same on SQLite and PostgreSQL.
 */
import { type Kysely, sql } from "kysely";

export async function alertSilencesUp(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("alert_silences")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("unit_id", "text")
    .addColumn("group_name", "text")
    .addColumn("rule", "text")
    .addColumn("starts_at", "bigint", (c) => c.notNull())
    .addColumn("ends_at", "bigint", (c) => c.notNull())
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_by", "text")
    .addColumn("updated_at", "bigint")
    .addCheckConstraint("alert_silences_kind", sql`kind in ('silence', 'maintenance')`)
    .addCheckConstraint("alert_silences_span", sql`ends_at > starts_at`)
    .addCheckConstraint(
      "alert_silences_matcher",
      sql`unit_id is not null or group_name is not null or rule is not null`,
    )
    .execute();
  await db.schema.createIndex("alert_silences_ends").on("alert_silences").column("ends_at").execute();
  await db.schema.alterTable("alert_changes").addColumn("silenced_by", "text").execute();
  await db.schema
    .alterTable("alerts")
    .addColumn("silenced", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}
