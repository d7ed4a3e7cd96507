/**
 * The fleet's schema migrations: one list for SQLite and PostgreSQL, written with Kysely's schema builder
 * so both dialects get the same tables (schema.ts). Kysely's Migrator runs them in order, recording each in
 * `kysely_migration` and holding `kysely_migration_lock` while it runs, so several fleet processes starting
 * against one PostgreSQL database migrate it once. Never edit a released migration: append a new one.
 */
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import { alertsUp } from "../alerts/migration.js";
import { dexMigrationUp } from "../dex/migration.js";
import { invoicesUp } from "../invoices/migration.js";
import { plansMigrationUp } from "../plans/migration.js";

/** Which SQL dialect the migrations run on: the few column types that differ are chosen by it. */
export type FleetDialect = "sqlite" | "postgres";

function fleetMigrations(dialect: FleetDialect): Record<string, Migration> {
  const pg = dialect === "postgres";
  /** An integer key the database assigns: `serial` on PostgreSQL, `integer primary key` (rowid) on SQLite. */
  const serial = pg ? ("serial" as const) : ("integer" as const);
  const bytes = pg ? sql`bytea` : ("blob" as const);
  return {
    "0001_fleet": {
      async up(db: Kysely<unknown>): Promise<void> {
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
        await db.schema
          .createTable("nonces")
          .addColumn("public_key", "text", (c) => c.notNull())
          .addColumn("nonce", "text", (c) => c.notNull())
          .addColumn("expires_at", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("nonces_pk", ["public_key", "nonce"])
          .execute();
        await db.schema.createIndex("nonces_expiry").on("nonces").column("expires_at").execute();
        await db.schema
          .createTable("bundles")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("kind", "text", (c) => c.notNull())
          .addColumn("version", "text", (c) => c.notNull())
          .addColumn("targets", "text", (c) => c.notNull())
          .addColumn("expires_at", "bigint")
          .addColumn("sha256", "text", (c) => c.notNull())
          .addColumn("size", "bigint", (c) => c.notNull())
          .addColumn("bytes", bytes, (c) => c.notNull())
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
        await db.schema
          .createTable("users")
          .addColumn("id", serial, (c) => c.primaryKey())
          .addColumn("username", "text", (c) => c.notNull().unique())
          .addColumn("password_hash", "text", (c) => c.notNull())
          .addColumn("role", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("web_sessions")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("user_id", "integer", (c) => c.notNull().references("users.id"))
          .addColumn("csrf", "text", (c) => c.notNull())
          .addColumn("created_at", "bigint", (c) => c.notNull())
          .addColumn("expires_at", "bigint", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("login_attempts")
          .addColumn("id", serial, (c) => c.primaryKey())
          .addColumn("username", "text", (c) => c.notNull())
          .addColumn("remote", "text", (c) => c.notNull())
          .addColumn("at", "bigint", (c) => c.notNull())
          .addColumn("ok", "integer", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("login_attempts_user")
          .on("login_attempts")
          .columns(["username", "at"])
          .execute();
        await db.schema
          .createTable("recon_runs")
          .addColumn("id", serial, (c) => c.primaryKey())
          .addColumn("run_at", "bigint", (c) => c.notNull())
          .addColumn("from_day", "text", (c) => c.notNull())
          .addColumn("to_day", "text", (c) => c.notNull())
          .addColumn("clean", "integer", (c) => c.notNull())
          .addColumn("summary", "text", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("recon_lines")
          .addColumn("id", serial, (c) => c.primaryKey())
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
      },
    },
    /** Issue 18: plans, members, charges, overages, callbacks seen, refunds, entitlement lists. */
    "0002_plans": { up: plansMigrationUp },
    /** Issue 18: companies, the product catalogue, invoices and their numbering. */
    "0003_invoices": { up: invoicesUp },
    /**
     * Issue 30: reconciliation per currency. `sales.currency` has been stored since 0001 (every session event
     * carries the unit's currency), so no sales row lacks one; reconciliation lines now record theirs
     * (older runs' lines stay NULL: they were never compared by currency), and totals per day and currency
     * read an index.
     */
    "0004_sales_currency": {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema.alterTable("recon_lines").addColumn("currency", "text").execute();
        await db.schema.createIndex("sales_day_currency").on("sales").columns(["day", "currency"]).execute();
      },
    },
    /**
     * Issue 33: whether the fleet checked a bundle's signature against its own bundle keys at upload (1) or
     * had none to check with (0: shown unverified). Bundles stored before are unverified.
     */
    "0005_bundle_verified": {
      up: async (db) => {
        await db.schema
          .alterTable("bundles")
          .addColumn("verified", "integer", (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    /** Issue 36: DEX reads of the units' vending machines. */
    "0006_dex": { up: dexMigrationUp },
    /** Issue 37: alerts, their changes, the delivery outbox and the evaluator's lease. */
    "0007_alerts": { up: alertsUp },
  };
}

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: FleetDialect) {}
  getMigrations(): Promise<Record<string, Migration>> {
    return Promise.resolve(fleetMigrations(this.dialect));
  }
}

/** Applies every pending migration; throws with the failing migration's name and error. */
export async function migrate(db: Kysely<unknown>, dialect: FleetDialect): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(
      `fleet database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
