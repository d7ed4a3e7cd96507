/** Migrations `0007_alerts` and `0011_alert_silences`: the tables of ./schema.ts, the same on SQLite and PostgreSQL. */
import { type Kysely, sql } from "kysely";

export async function alertsUp(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("alerts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("unit_id", "text", (c) => c.notNull())
    .addColumn("rule", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("opened_at", "bigint", (c) => c.notNull())
    .addColumn("last_true_at", "bigint", (c) => c.notNull())
    .addColumn("last_notified_at", "bigint", (c) => c.notNull())
    .addColumn("resolved_at", "bigint")
    .addColumn("acked_by", "text")
    .addColumn("acked_at", "bigint")
    .addCheckConstraint("alerts_state", sql`state in ('open', 'resolved')`)
    .execute();
  // One open alert per unit and rule, whichever process or run sees the condition.
  await db.schema
    .createIndex("alerts_one_open")
    .on("alerts")
    .columns(["unit_id", "rule"])
    .unique()
    .where(sql.ref("state"), "=", "open")
    .execute();
  await db.schema.createIndex("alerts_opened").on("alerts").column("opened_at").execute();
  await db.schema
    .createTable("alert_changes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("alert_id", "text", (c) => c.notNull().references("alerts.id"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("actor", "text")
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("run_id", "text")
    .execute();
  await db.schema
    .createIndex("alert_changes_alert")
    .on("alert_changes")
    .columns(["alert_id", "at"])
    .execute();
  await db.schema
    .createTable("alert_deliveries")
    .addColumn("change_id", "text", (c) => c.notNull().references("alert_changes.id"))
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_at", "bigint", (c) => c.notNull())
    .addColumn("claimed_until", "bigint")
    .addColumn("last_error", "text")
    .addColumn("sent_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("alert_deliveries_pk", ["change_id", "channel"])
    .addCheckConstraint("alert_deliveries_state", sql`state in ('pending', 'sent', 'failed')`)
    .execute();
  await db.schema
    .createIndex("alert_deliveries_due")
    .on("alert_deliveries")
    .columns(["state", "next_at"])
    .execute();
  await db.schema
    .createTable("alert_lease")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("until", "bigint", (c) => c.notNull())
    .execute();
}

/**
 * Migration `0011_alert_silences` (issue 42): silences and maintenance windows (`alert_silences`), and on
 * each change the silence that kept it from being sent (`alert_changes.silenced_by`); on each alert whether
 * its last message was silenced (`alerts.silenced`: sent at the first evaluation after the silence ends).
 */
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
