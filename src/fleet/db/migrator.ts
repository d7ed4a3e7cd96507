/**
 * The fleet's schema migrator, knowing no feature: the composition (src/fleet/database.ts) hands it the
 * ordered list of migrations, each a name and the steps the features contribute to it, written with
 * Kysely's schema builder so SQLite and PostgreSQL get the same tables. Kysely's Migrator runs them in
 * order, recording each in `kysely_migration` and holding `kysely_migration_lock` while it runs, so several
 * fleet processes starting against one PostgreSQL database migrate it once. Never edit a released
 * migration: append a new one.
 */
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";

/** Which SQL dialect the migrations run on: the few column types that differ are chosen by it. */
export type FleetDialect = "sqlite" | "postgres";

/** One feature's part of a migration. */
export type MigrationStep = (db: Kysely<unknown>, dialect: FleetDialect) => Promise<void>;

/** A migration as the database records it: its name (never changed once released) and its steps, in order. */
export interface FleetMigration {
  readonly name: string;
  readonly steps: readonly MigrationStep[];
}

/** An integer key the database assigns: `serial` on PostgreSQL, `integer primary key` (rowid) on SQLite. */
export function serialType(dialect: FleetDialect): "serial" | "integer" {
  return dialect === "postgres" ? "serial" : "integer";
}

/** A byte column: `bytea` on PostgreSQL, `blob` on SQLite. */
export function bytesType(dialect: FleetDialect): ReturnType<typeof sql> | "blob" {
  return dialect === "postgres" ? sql`bytea` : "blob";
}

class ListProvider implements MigrationProvider {
  constructor(
    private readonly dialect: FleetDialect,
    private readonly migrations: readonly FleetMigration[],
  ) {}
  getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const m of this.migrations) {
      out[m.name] = {
        up: async (db) => {
          for (const step of m.steps) await step(db, this.dialect);
        },
      };
    }
    return Promise.resolve(out);
  }
}

/** Applies every pending migration of `migrations`; throws with the failing migration's name and error. */
export async function migrate(
  db: Kysely<unknown>,
  dialect: FleetDialect,
  migrations: readonly FleetMigration[],
): Promise<void> {
  const migrator = new Migrator({ db, provider: new ListProvider(dialect, migrations) });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(
      `fleet database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
