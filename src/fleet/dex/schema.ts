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
}

declare module "../db/schema.js" {
  interface FleetDatabase {
    dex_reads: DexReadsTable;
  }
}
