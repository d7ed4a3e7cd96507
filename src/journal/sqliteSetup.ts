import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { JournalError } from "./journal.js";
import { MIGRATIONS } from "./migrations.js";

/** SQLite's page cache of a journal connection, KiB. */
export const JOURNAL_CACHE_KIB = 2048;

/**
 * Sets a freshly opened journal connection up: WAL (file journals), `synchronous=FULL`, the size limit,
 * foreign keys, the migrations; then writes `opened_at`/`journal_id` and verifies `synchronous` after that
 * first write (better-sqlite3 defaults WAL to NORMAL, which loses recent commits on power loss; reliability §1.2).
 * @throws JournalError `durability` or `integrity` (schema newer than this vendd).
 */
export function setUpConnection(
  db: Database.Database,
  opts: { memory: boolean; sizeLimitBytes?: number; now: number; unitId?: string; currency?: string },
): void {
  if (!opts.memory) {
    const mode = db.pragma("journal_mode = WAL", { simple: true });
    if (mode !== "wal") throw new JournalError("durability", `journal_mode is ${String(mode)}, not wal`);
  }
  db.pragma("synchronous = FULL");
  db.pragma(`journal_size_limit = ${Math.trunc(opts.sizeLimitBytes ?? 8 * 1024 * 1024)}`);
  db.pragma("foreign_keys = ON");
  // Memory, not durability (docs/board.md, "Memory"): better-sqlite3 builds SQLite with a 16 MB page cache
  // per connection, which the daemon filled as the journal grew (RSS +1.3 MB per 1,000 vends); 2 MiB holds
  // the pages a vend touches (the newest sessions and the indexes), older pages come from the OS's cache.
  db.pragma(`cache_size = -${JOURNAL_CACHE_KIB}`);
  db.pragma("mmap_size = 0");
  migrate(db);
  // Verify after a write: on a fresh WAL database the pragma can read FULL before the first write and
  // NORMAL after it (reliability.md §1.2).
  db.transaction(() => {
    db.prepare(
      "INSERT INTO meta (key, value) VALUES ('opened_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ).run(String(opts.now));
    db.prepare("INSERT INTO meta (key, value) VALUES ('journal_id', ?) ON CONFLICT (key) DO NOTHING").run(
      randomUUID(),
    );
    // Issue 30: the unit and its currency, so a reader without the config (`vendd reconcile --journal`)
    // knows them; sessions from before migration 7 take the configured currency (the only one the unit
    // had: a unit's currency is its config's, and the journal of a unit is never shared).
    const meta = db.prepare(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    if (opts.unitId !== undefined) meta.run("unit_id", opts.unitId);
    if (opts.currency !== undefined) {
      meta.run("currency", opts.currency);
      db.prepare("UPDATE sessions SET currency = ? WHERE currency IS NULL").run(opts.currency);
    }
  })();
  const sync = db.pragma("synchronous", { simple: true });
  if (sync !== 2)
    throw new JournalError("durability", `synchronous is ${String(sync)} after a write, not FULL (2)`);
}

/** Applies the migrations past `user_version`, one transaction each; refuses a schema newer than this vendd. */
function migrate(db: Database.Database): void {
  const version = Number(db.pragma("user_version", { simple: true }));
  if (version > MIGRATIONS.length) {
    throw new JournalError(
      "integrity",
      `journal schema ${version} is newer than this vendd (${MIGRATIONS.length})`,
    );
  }
  for (let v = version; v < MIGRATIONS.length; v++) {
    const sql = MIGRATIONS[v];
    if (sql === undefined) break;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
