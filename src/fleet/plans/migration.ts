/** Migration "0002_plans": the tables of plans/schema.ts, for SQLite and PostgreSQL alike. */
import { type Kysely, sql } from "kysely";

export async function plansMigrationUp(db: Kysely<unknown>): Promise<void> {
  await memberTables(db);
  await billingTables(db);
}

/** 0002_plans, first half: the index of plan vends, plans and members. */
async function memberTables(db: Kysely<unknown>): Promise<void> {
  // Plan vends per member and day (sales.member_id is created by 0001_fleet).
  await db.schema.createIndex("sales_member").on("sales").columns(["member_id", "day"]).execute();
  await db.schema
    .createTable("plans")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("price", "bigint", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("day_items", "bigint")
    .addColumn("day_amount", "bigint")
    .addColumn("month_items", "bigint")
    .addColumn("month_amount", "bigint")
    .addColumn("units", "text", (c) => c.notNull())
    .addColumn("active", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addCheckConstraint("plans_price", sql`price >= 0`)
    .execute();
  await db.schema
    .createTable("members")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("plan_id", "text", (c) => c.notNull().references("plans.id"))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("phone", "text")
    .addColumn("badge_hash", "text", (c) => c.notNull())
    .addColumn("company_id", "text")
    .addColumn("agreement_id", "text", (c) => c.unique())
    .addColumn("agreement_status", "text")
    .addColumn("landing_url", "text")
    .addColumn("grace_until", "bigint")
    .addColumn("reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("activated_at", "bigint")
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addCheckConstraint("members_status", sql`status in ('pending', 'active', 'suspended', 'ended')`)
    .execute();
  await db.schema.createIndex("members_badge").on("members").column("badge_hash").execute();
}

/** 0002_plans, second half: charges, overages, callbacks seen, refunds and entitlement lists. */
async function billingTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("plan_charges")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("member_id", "text", (c) => c.notNull().references("members.id"))
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("due_date", "text", (c) => c.notNull())
    .addColumn("amount", "bigint", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("payment_id", "text", (c) => c.unique())
    .addColumn("status_text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("requested_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("plan_charges_member")
    .on("plan_charges")
    .columns(["member_id", "period"])
    .execute();
  await db.schema
    .createTable("plan_overages")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("member_id", "text", (c) => c.notNull().references("members.id"))
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("items", "integer", (c) => c.notNull())
    .addColumn("amount", "bigint", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("oneoff_id", "text", (c) => c.unique())
    .addColumn("landing_url", "text")
    .addColumn("status_text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("plan_overages_period", ["member_id", "period"])
    .execute();
  await db.schema
    .createTable("plan_callbacks")
    .addColumn("digest", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("plan_refunds")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("member_id", "text", (c) => c.notNull().references("members.id"))
    .addColumn("payment_id", "text", (c) => c.notNull())
    .addColumn("amount", "bigint")
    .addColumn("refund_id", "text")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("status_text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("requested_by", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("plan_entitlements")
    .addColumn("serial", "bigint", (c) => c.primaryKey())
    .addColumn("document", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("etag", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("issued_at", "bigint", (c) => c.notNull())
    .addColumn("valid_until", "bigint", (c) => c.notNull())
    .execute();
}
