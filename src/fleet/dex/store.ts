/**
 * The DEX audits' SQL (issue 36): a unit's `dex` event stored in `dex_reads`, the pushes read back for the
 * DEX audits page.
 */
import type { Kysely, Transaction } from "kysely";
import type { DexData } from "../../core/fleetWire.js";
import type { FleetDatabase } from "../db/schema.js";
import { type DexPush, eventSegments } from "./events.js";

/** Stores a unit's `dex` event in `dex_reads` (issue 36): once per unit and read id, whatever is replayed. */

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
      g85: e.data.g85,
    })
    .onConflict((oc) => oc.columns(["unit_id", "read_id"]).doNothing())
    .execute();
}

/** The pushes received in [start, end), oldest first; of one unit when given. */
export async function loadDexPushes(
  db: Kysely<FleetDatabase>,
  start: number,
  end: number,
  unit?: string,
): Promise<DexPush[]> {
  let q = db
    .selectFrom("dex_reads")
    .select(["unit_id", "read_id", "at", "outcome", "raw", "error"])
    .where("trigger", "=", "push")
    .where("at", ">=", start)
    .where("at", "<", end);
  if (unit !== undefined) q = q.where("unit_id", "=", unit);
  const rows = await q.orderBy("at").orderBy("unit_id").limit(1000).execute();
  return rows.map((r) => ({
    unit: r.unit_id,
    readId: r.read_id,
    at: Number(r.at),
    outcome: r.outcome,
    events: eventSegments(r.raw),
    error: r.error,
  }));
}

/** A G85 result that leaves a read's counters unverified (dex.md, CRC policy). */
export const G85_UNVERIFIED = "bad";

/**
 * A unit's good reads (outcome ok, with counters), oldest first (load.ts): the last *verified* one before
 * `start` (the baseline; with `marked`, the machine's G85 is known wrong and any read is its baseline), the
 * unverified reads after it, and those in [start, end).
 */
export async function goodReads(
  db: Kysely<FleetDatabase>,
  unit: string,
  start: number,
  end: number,
  marked: boolean,
) {
  const base = db
    .selectFrom("dex_reads")
    .select(["read_id", "at", "counters", "g85"])
    .where("unit_id", "=", unit)
    .where("outcome", "=", "ok")
    .where("trigger", "<>", "push")
    .where("counters", "is not", null);
  const recent = await base.where("at", "<", start).orderBy("at", "desc").limit(50).execute();
  const upTo = recent.findIndex((r) => marked || r.g85 !== G85_UNVERIFIED);
  const before = (upTo === -1 ? recent.slice(0, 1) : recent.slice(0, upTo + 1)).reverse();
  const within = await base.where("at", ">=", start).where("at", "<", end).orderBy("at").execute();
  return { before, within };
}

/** The manager's mark on a machine whose G85 is always wrong, or null. */
export async function g85Mark(db: Kysely<FleetDatabase>, unit: string) {
  return (
    (await db
      .selectFrom("dex_g85_marks")
      .select(["marked_by", "reason", "marked_at"])
      .where("unit_id", "=", unit)
      .executeTakeFirst()) ?? null
  );
}

/** A unit's latest DEX read (not a push), for its dashboard page, or null. */
export async function lastReadOf(db: Kysely<FleetDatabase>, unit: string) {
  return (
    (await db
      .selectFrom("dex_reads")
      .select(["read_id", "at", "outcome", "g85"])
      .where("unit_id", "=", unit)
      .where("trigger", "<>", "push")
      .orderBy("at", "desc")
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}

/** Marks (or, with `mark` null, unmarks) a unit's machine as one whose G85 is always wrong. */
export async function setG85Mark(
  db: Kysely<FleetDatabase>,
  unit: string,
  mark: { by: string; reason: string; at: number } | null,
): Promise<void> {
  if (mark === null) {
    await db.deleteFrom("dex_g85_marks").where("unit_id", "=", unit).execute();
    return;
  }
  const row = { marked_by: mark.by, reason: mark.reason, marked_at: mark.at };
  await db
    .insertInto("dex_g85_marks")
    .values({ unit_id: unit, ...row })
    .onConflict((oc) => oc.column("unit_id").doUpdateSet(row))
    .execute();
}

/** Whether the fleet knows the unit. */
export async function unitExists(db: Kysely<FleetDatabase>, unit: string): Promise<boolean> {
  return (await db.selectFrom("units").select("id").where("id", "=", unit).executeTakeFirst()) !== undefined;
}

/** The settlement runs overlapping the days `first`..`last`, newest first. */
export async function runsCovering(db: Kysely<FleetDatabase>, first: string, last: string) {
  return db
    .selectFrom("recon_runs")
    .select(["id", "from_day", "to_day"])
    .where("from_day", "<=", last)
    .where("to_day", ">=", first)
    .orderBy("run_at", "desc")
    .orderBy("id", "desc")
    .execute();
}

/** The reconciliation lines one run stored for one unit and day. */
export async function reconLinesOf(db: Kysely<FleetDatabase>, runId: number, day: string, unit: string) {
  return db
    .selectFrom("recon_lines")
    .select(["class", "order_id", "reported"])
    .where("run_id", "=", runId)
    .where("day", "=", day)
    .where("unit_id", "=", unit)
    .execute();
}

/** A unit's sales rows closed in (since, last]. */
export async function salesBetween(db: Kysely<FleetDatabase>, unit: string, since: number, last: number) {
  return db
    .selectFrom("sales")
    .select(["order_id", "closed_at", "approved", "vends_ok", "currency"])
    .where("unit_id", "=", unit)
    .where("closed_at", ">", since)
    .where("closed_at", "<=", last)
    .execute();
}

/** When each of a unit's sessions with these order ids closed, whenever that was (in chunks of 500 ids). */
export async function sessionsOf(
  db: Kysely<FleetDatabase>,
  unit: string,
  orderIds: readonly string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < orderIds.length; i += 500) {
    const rows = await db
      .selectFrom("sales")
      .select(["order_id", "closed_at"])
      .where("unit_id", "=", unit)
      .where("order_id", "in", orderIds.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(r.order_id, Number(r.closed_at));
  }
  return out;
}

/** The units with a DEX read in [start, end) (or `unit` alone), by id. */
export async function unitsWithReads(
  db: Kysely<FleetDatabase>,
  start: number,
  end: number,
  unit: string | undefined,
): Promise<string[]> {
  let q = db
    .selectFrom("dex_reads")
    .select("unit_id")
    .distinct()
    .where("at", ">=", start)
    .where("at", "<", end);
  if (unit !== undefined) q = q.where("unit_id", "=", unit);
  return (await q.orderBy("unit_id").execute()).map((r) => r.unit_id);
}
