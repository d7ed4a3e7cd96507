/** Stores a unit's `dex` event in `dex_reads` (issue 36): once per unit and read id, whatever is replayed. */
import type { Transaction } from "kysely";
import type { DexData } from "../../core/fleetWire.js";
import type { FleetDatabase } from "../db/schema.js";

export async function storeDexRead(
  trx: Transaction<FleetDatabase>,
  unitId: string,
  e: { seq: number; at: number; data: DexData },
  now: number,
): Promise<void> {
  await trx
    .insertInto("dex_reads")
    .values({
      unit_id: unitId,
      read_id: e.data.readId,
      seq: e.seq,
      at: e.at,
      trigger: e.data.trigger,
      outcome: e.data.outcome,
      counters: e.data.counters === null ? null : JSON.stringify(e.data.counters),
      raw: e.data.raw,
      error: e.data.error,
      received_at: now,
    })
    .onConflict((oc) => oc.columns(["unit_id", "read_id"]).doNothing())
    .execute();
}
