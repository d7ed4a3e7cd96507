/** The DEX feature's table (migration 0006_dex), added to the fleet's database type (db/schema.ts). */

/** Each DEX read a unit sent (issue 36, migration 0006_dex): once per unit and read id. */
export interface DexReadsTable {
  unit_id: string;
  read_id: string;
  seq: number;
  at: number;
  trigger: string;
  outcome: string;
  /** drivers/dex/counters.ts DexCounters as JSON, or null for a failed read. */
  counters: string | null;
  raw: string | null;
  error: string | null;
  received_at: number;
  /** The file's G85 check (`ok|swapped|bad|absent`; migration 0008_dex_g85), null for a failed read. */
  g85: string | null;
}

/** A machine whose G85 a manager marked as always wrong (migration 0008_dex_g85). */
export interface DexG85MarksTable {
  unit_id: string;
  marked_by: string;
  reason: string;
  marked_at: number;
}

declare module "../db/schema.js" {
  interface FleetDatabase {
    dex_reads: DexReadsTable;
    dex_g85_marks: DexG85MarksTable;
  }
}
