/**
 * `vendd journal export --dex` (issue 42): the journal's DEX reads (scheduled, console, and the machine's
 * pushes), good and failed, as JSON lines, read-only (safe while vendd runs): each with its raw EVA-DTS file,
 * its G85 result and its parsed since-init counters, in time order.
 */
import { type DbRow, toRow } from "./dexStore.js";
import { hasTable, openReadOnly } from "./export.js";

export interface DexReadExport {
  readId: string;
  at: string;
  trigger: string;
  outcome: string;
  role: string | null;
  attempts: number;
  g85: string | null;
  /** The counters of a `bad` G85 read are kept but unverified (docs/dex.md). */
  verified: boolean;
  warnings: number;
  error: string | null;
  counters: unknown;
  raw: string | null;
}

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The DEX reads in [from, to) (ms; either open), oldest first; none when the journal has no DEX table. */
export function exportDexReads(path: string, opts: { from?: number; to?: number }): DexReadExport[] {
  const db = openReadOnly(path);
  try {
    if (!hasTable(db, "dex_reads")) return [];
    const rows = db
      .prepare("SELECT * FROM dex_reads WHERE at >= ? AND at < ? ORDER BY at, id")
      .all(opts.from ?? 0, opts.to ?? Number.MAX_SAFE_INTEGER) as DbRow[];
    return rows.map(toRow).map((r) => ({
      readId: r.readId,
      at: new Date(r.at).toISOString(),
      trigger: r.trigger,
      outcome: r.outcome,
      role: r.role,
      attempts: r.attempts,
      g85: r.g85,
      verified: r.g85 !== "bad",
      warnings: r.warnings,
      error: r.error,
      counters: parsed(r.counters),
      raw: r.raw,
    }));
  } finally {
    db.close();
  }
}
