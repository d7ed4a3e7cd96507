/**
 * `vendd fleet backup --out FILE [--db FILE] [--config FILE]`: a consistent copy of a SQLite fleet database
 * while the server keeps serving (SQLite's online backup API, through better-sqlite3, from a read-only
 * connection: the server's writes go on in WAL mode). The copy is written under a temporary name, checked
 * (`PRAGMA integrity_check`), made 0600 and renamed into place. A PostgreSQL fleet is backed up with
 * pg_dump (docs/fleet-server.md).
 */
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { fsyncDirectory } from "../core/atomicFile.js";
import { printable } from "../core/printable.js";
import { FleetConfigError, fleetConfigDb } from "../fleet/config.js";
import { parseOptionsOrExit } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS } from "./fleetCommands.js";

const USAGE = renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet backup")));

export async function fleetBackupCommand(argv: string[]): Promise<number> {
  const values = parseOptionsOrExit(
    "fleet backup",
    argv,
    {
      out: { type: "string" },
      db: { type: "string" },
      config: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    USAGE,
    { stdout: process.stdout, stderr: process.stderr, env: process.env },
  );
  if (typeof values === "number") return values;
  let db = values.db ?? process.env.VENDD_FLEET_DB;
  if ((db === undefined || db === "") && values.config !== undefined) {
    try {
      db = fleetConfigDb(values.config);
    } catch (err) {
      if (err instanceof FleetConfigError) {
        process.stderr.write(`vendd fleet backup: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
  }
  const out = values.out;
  const fail = (message: string): number => {
    process.stderr.write(`vendd fleet backup: ${message}\n${USAGE}`);
    return 2;
  };
  if (out === undefined) return fail("--out FILE is required (a new file for the copy)");
  if (db === undefined || db === "") return fail("no database: give --db FILE or --config FILE");
  if (/^postgres(ql)?:\/\//.test(db))
    return fail("the fleet database is PostgreSQL: back it up with pg_dump (docs/fleet-server.md, Backup)");
  if (!existsSync(db)) return fail(`--db ${printable(db, 200)}: no such file`);
  if (existsSync(out))
    return fail(`--out ${printable(out, 200)} exists: choose a new file (nothing was written)`);

  const partial = `${out}.partial`;
  rmSync(partial, { force: true });
  const source = new Database(db, { readonly: true, fileMustExist: true });
  try {
    await source.backup(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    process.stderr.write(
      `vendd fleet backup: copying ${printable(db, 200)} failed: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return 1;
  } finally {
    source.close();
  }
  const copy = new Database(partial);
  let integrity: unknown;
  try {
    copy.pragma("journal_mode = DELETE");
    integrity = copy.pragma("integrity_check", { simple: true });
  } finally {
    copy.close();
  }
  if (integrity !== "ok") {
    rmSync(partial, { force: true });
    process.stderr.write(`vendd fleet backup: the copy failed its integrity check (${String(integrity)})\n`);
    return 1;
  }
  // The fleet's data (sales, secrets' hashes): readable by its owner only, on disk before it is named.
  chmodSync(partial, 0o600);
  const fd = openSync(partial, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(partial, out);
  fsyncDirectory(dirname(resolve(out)));
  process.stdout.write(
    `vendd fleet: backed up ${db} to ${out} (${statSync(out).size} bytes, integrity ok)\n`,
  );
  return 0;
}
