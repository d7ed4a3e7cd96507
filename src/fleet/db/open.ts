/**
 * Opens the fleet's database: the embedded default (one SQLite file, WAL, `synchronous=FULL`, zero setup)
 * or PostgreSQL (`postgres://…`, shared by several fleet processes), migrated with the list it is given
 * (src/fleet/database.ts).
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { createPrivateFile } from "../../core/atomicFile.js";
import { safeUrl } from "../../core/safeUrl.js";
import { type FleetDialect, type FleetMigration, migrate } from "./migrator.js";
import type { FleetDatabase } from "./schema.js";
import type { HotPath } from "./unitStatements.js";
import { postgresHotPath } from "./unitStatementsPostgres.js";
import { sqliteHotPath } from "./unitStatementsSqlite.js";

/** The fleet database could not be opened: the message names it (never a password) and the next step. */
export class FleetDbError extends Error {
  override readonly name = "FleetDbError";
}

/** Why `target` could not be opened, as a FleetDbError saying what, where and what to do. */
export function fleetDbError(target: string, err: unknown): FleetDbError {
  if (err instanceof FleetDbError) return err;
  const code = (err as { code?: unknown }).code;
  const msg = err instanceof Error ? err.message : String(err);
  if (isPostgresUrl(target)) {
    const where = redactUrl(target);
    const u = (() => {
      try {
        return new URL(target);
      } catch {
        return null;
      }
    })();
    const pw = u === null ? "" : decodeURIComponent(u.password);
    const cause = (pw === "" ? msg : msg.split(pw).join("***")).replace(
      /^fleet database migration unknown failed: /,
      "",
    );
    const why =
      code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ETIMEDOUT" || code === "EHOSTUNREACH"
        ? `PostgreSQL is unreachable (${String(code)})`
        : cause;
    return new FleetDbError(
      `fleet database ${where}: ${why}; check that PostgreSQL runs there and the URL (--db, $VENDD_FLEET_DB or db in the fleet config)`,
    );
  }
  const next = "check the path given by --db, $VENDD_FLEET_DB or db in the fleet config";
  if (code === "SQLITE_NOTADB")
    return new FleetDbError(
      `fleet database ${target}: not a SQLite database; ${next} (is it the fleet's fleet.db?)`,
    );
  if (code === "SQLITE_CANTOPEN")
    return new FleetDbError(
      `fleet database ${target}: cannot be opened as a file (a directory, a missing directory or no permission); ${next}`,
    );
  return new FleetDbError(`fleet database ${target}: ${msg}; ${next}`);
}

export interface FleetDb {
  db: Kysely<FleetDatabase>;
  /**
   * For writes that need not wait for the disk (db/asyncCommit.ts): on PostgreSQL a small second pool whose
   * sessions run with `synchronous_commit = off`, so such a write is one statement, no transaction; on
   * SQLite the same connection as `db`.
   */
  light: Kysely<FleetDatabase>;
  /** The unit API's per-request statements (db/unitStatements.ts). */
  hot: HotPath;
  dialect: FleetDialect;
  /** Where it is, for logs: the file path, or the PostgreSQL URL without its password. */
  where: string;
  close(): Promise<void>;
}

/** int8 (bigint) as a JS number: times in ms and money in minor units stay far below 2^53. */
const INT8_OID = 20;
pg.types.setTypeParser(INT8_OID, (v: string) => Number(v));

/** `postgres://` or `postgresql://` URLs go to PostgreSQL; anything else is a SQLite file path. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//.test(target);
}

/** The URL without its user info (user name and password), safe for a log line or an error message. */
export function redactUrl(target: string): string {
  const shown = safeUrl(target);
  return shown.startsWith("(") ? "postgres://(unparsable URL)" : shown;
}

/** Most prepared statements kept; a query of another shape beyond it is prepared again. */
const STATEMENT_CACHE_MAX = 256;

/**
 * Kysely prepares every query anew; preparing costs about as much as running one of the fleet's small
 * statements. The same SQL text gets the same prepared statement (queries differ only in their parameters),
 * so the unit API's few shapes are prepared once. Kysely never holds an iterator across queries here.
 */
function cachingStatements(file: Database.Database): {
  close(): void;
  prepare(sql: string): Database.Statement;
} {
  const cache = new Map<string, Database.Statement>();
  return {
    close: () => file.close(),
    prepare(sql: string): Database.Statement {
      let stmt = cache.get(sql);
      if (stmt === undefined) {
        stmt = file.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_MAX) cache.clear();
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

export interface OpenFleetDbOptions {
  /** PostgreSQL connections of the main pool (default 10); the light pool has half as many. */
  poolSize?: number;
  /**
   * PostgreSQL: open every connection of both pools before returning, and keep them open while idle. A
   * serving fleet does (`vendd fleet serve`): otherwise the first seconds after a start or a restart, when
   * every unit's request arrives at once, also pay for the server's new backends one by one.
   */
  warm?: boolean;
  /**
   * Create (and migrate) the SQLite file when it does not exist. Only `vendd fleet serve` and
   * `vendd fleet init` do: an admin command given a mistyped path refuses instead of making an empty fleet.
   */
  create?: boolean;
}

/** Opens `n` connections of `pool` at once and returns them to it. */
async function warmPool(pool: pg.Pool, n: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  for (const c of clients) c.release();
}

/**
 * Opens the fleet database at `target` and applies `migrations` (src/fleet/database.ts's list: callers use
 * its `openFleetDb`); a failure is a FleetDbError naming it and the next step. A SQLite file that does not
 * exist is created only with `opts.create` (default true for callers in code; the admin commands pass false).
 */
export async function openDatabase(
  target: string,
  migrations: readonly FleetMigration[],
  opts: OpenFleetDbOptions = {},
): Promise<FleetDb> {
  if (!isPostgresUrl(target) && target !== ":memory:" && opts.create === false && !existsSync(target))
    throw new FleetDbError(
      `fleet database ${target}: no such file; give the fleet's database (--db, $VENDD_FLEET_DB or db in the fleet config), or create one with \`vendd fleet init --db ${target}\` or \`vendd fleet serve\``,
    );
  try {
    return await openOrThrow(target, migrations, opts);
  } catch (err) {
    throw fleetDbError(target, err);
  }
}

async function openOrThrow(
  target: string,
  migrations: readonly FleetMigration[],
  opts: OpenFleetDbOptions,
): Promise<FleetDb> {
  if (isPostgresUrl(target)) {
    const poolMax = opts.poolSize ?? 10;
    const lightMax = Math.max(2, Math.ceil(poolMax / 2));
    const pool = new pg.Pool({
      connectionString: target,
      max: poolMax,
      min: opts.warm === true ? poolMax : 0,
    });
    // An idle connection the server closed (a restart, a failover) must not crash the process: pg emits
    // it on the pool, and the next query takes a fresh connection.
    pool.on("error", () => {});
    const db = new Kysely<FleetDatabase>({ dialect: new PostgresDialect({ pool }) });
    try {
      await migrate(db as Kysely<unknown>, "postgres", migrations);
    } catch (err) {
      await db.destroy();
      throw err;
    }
    const lightPool = new pg.Pool({
      connectionString: target,
      max: lightMax,
      min: opts.warm === true ? lightMax : 0,
      options: "-c synchronous_commit=off",
    });
    lightPool.on("error", () => {});
    const light = new Kysely<FleetDatabase>({ dialect: new PostgresDialect({ pool: lightPool }) });
    if (opts.warm === true) {
      try {
        await Promise.all([warmPool(pool, poolMax), warmPool(lightPool, lightMax)]);
      } catch (err) {
        await light.destroy();
        await db.destroy();
        if (!lightPool.ending) await lightPool.end();
        throw err;
      }
    }
    return {
      db,
      light,
      hot: postgresHotPath(lightPool, pool),
      dialect: "postgres",
      where: redactUrl(target),
      close: async () => {
        await light.destroy();
        await db.destroy();
        // Kysely ends a pool only if a query of its own ever ran on it; the hot path's queries do not.
        if (!lightPool.ending) await lightPool.end();
        if (!pool.ending) await pool.end();
      },
    };
  }
  if (target !== ":memory:") createPrivateFile(target);
  const file = new Database(target);
  try {
    file.pragma("journal_mode = WAL");
  } catch (err) {
    file.close();
    throw err;
  }
  file.pragma("synchronous = FULL");
  file.pragma("foreign_keys = ON");
  file.pragma("busy_timeout = 5000");
  if (target !== ":memory:" && String(file.pragma("journal_mode", { simple: true })) !== "wal")
    throw new Error(`fleet database ${target}: WAL mode could not be set`);
  const db = new Kysely<FleetDatabase>({ dialect: new SqliteDialect({ database: cachingStatements(file) }) });
  try {
    await migrate(db as Kysely<unknown>, "sqlite", migrations);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    db,
    light: db,
    hot: sqliteHotPath(db, file),
    dialect: "sqlite",
    where: target,
    close: () => db.destroy(),
  };
}
