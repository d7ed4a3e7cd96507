/**
 * The DEX audit reads in the journal (issue 36, the migration after plan vends): each read of the machine's
 * DEX port with its raw EVA-DTS file and the parsed since-init counters, or why it failed. The daemon is the
 * only writer; the console reads the last one.
 */
import type Database from "better-sqlite3";
import { DEX_WIRE_RAW_MAX, type DexData } from "../core/fleetWire.js";
import { JournalError } from "./journal.js";

export interface NewDexRead {
  readId: string;
  at: number;
  trigger: "schedule" | "console" | "push";
  outcome: "ok" | "failed";
  role: "master" | "slave" | null;
  attempts: number;
  /** The file as received (latin1 text), null when the read failed. */
  raw: string | null;
  /** The parsed counters (JSON-serialisable), null when the read failed. */
  counters: unknown;
  g85: string | null;
  warnings: number;
  error: string | null;
}

export interface DexReadRow extends Omit<NewDexRead, "counters"> {
  id: number;
  /** The counters as stored (JSON text), or null. */
  counters: string | null;
}

export interface DbRow {
  id: number;
  read_id: string;
  at: number;
  trigger: NewDexRead["trigger"];
  outcome: NewDexRead["outcome"];
  role: NewDexRead["role"];
  attempts: number;
  raw: string | null;
  counters: string | null;
  g85: string | null;
  warnings: number;
  error: string | null;
}

export const toRow = (r: DbRow): DexReadRow => ({
  id: r.id,
  readId: r.read_id,
  at: r.at,
  trigger: r.trigger,
  outcome: r.outcome,
  role: r.role,
  attempts: r.attempts,
  raw: r.raw,
  counters: r.counters,
  g85: r.g85,
  warnings: r.warnings,
  error: r.error,
});

export class DexStore {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = {
      insert: db.prepare(
        `INSERT INTO dex_reads (read_id, at, trigger, outcome, role, attempts, raw, counters, g85, warnings, error)
         VALUES (@readId, @at, @trigger, @outcome, @role, @attempts, @raw, @counters, @g85, @warnings, @error)
         ON CONFLICT (read_id) DO NOTHING`,
      ),
      // a machine's push of events is not a read of its audit: `last` and `lastOk` leave pushes out
      last: db.prepare("SELECT * FROM dex_reads WHERE trigger <> 'push' ORDER BY at DESC, id DESC LIMIT 1"),
      lastOk: db.prepare(
        "SELECT * FROM dex_reads WHERE outcome = 'ok' AND trigger <> 'push' ORDER BY at DESC, id DESC LIMIT 1",
      ),
      lastPush: db.prepare(
        "SELECT * FROM dex_reads WHERE trigger = 'push' ORDER BY at DESC, id DESC LIMIT 1",
      ),
      count: db.prepare("SELECT count(*) FROM dex_reads").pluck(),
    };
  }

  /** Records one read; a read id recorded before is kept as it was (returns false). */
  record(read: NewDexRead): boolean {
    try {
      const counters =
        read.counters === null || read.counters === undefined ? null : JSON.stringify(read.counters);
      return this.s.insert.run({ ...read, counters }).changes === 1;
    } catch (e) {
      throw new JournalError("io", `journal write failed (dex read): ${(e as Error).message}`, { cause: e });
    }
  }

  /** The latest read (failed ones included, pushes left out), or null. */
  last(): DexReadRow | null {
    const r = this.s.last.get() as DbRow | undefined;
    return r ? toRow(r) : null;
  }

  /** The latest push of events the machine made by itself, or null. */
  lastPush(): DexReadRow | null {
    const r = this.s.lastPush.get() as DbRow | undefined;
    return r ? toRow(r) : null;
  }

  /** The latest successful read, or null. */
  lastOk(): DexReadRow | null {
    const r = this.s.lastOk.get() as DbRow | undefined;
    return r ? toRow(r) : null;
  }

  count(): number {
    return Number(this.s.count.get());
  }
}

/** The `dex` outbox event of a read; a file past DEX_WIRE_RAW_MAX goes without its text (its counters go). */
export function dexEventData(read: NewDexRead): DexData {
  const raw = read.raw !== null && read.raw.length <= DEX_WIRE_RAW_MAX ? read.raw : null;
  const counters =
    typeof read.counters === "object" && read.counters !== null
      ? (JSON.parse(JSON.stringify(read.counters)) as Record<string, unknown>)
      : null;
  return {
    readId: read.readId,
    trigger: read.trigger,
    outcome: read.outcome,
    role: read.role,
    attempts: read.attempts,
    raw,
    rawBytes: read.raw?.length ?? 0,
    counters,
    g85: read.g85 === null ? null : read.g85.slice(0, 16),
    warnings: read.warnings,
    error: read.error === null ? null : read.error.slice(0, 500),
  };
}
