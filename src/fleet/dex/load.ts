/**
 * Loading the three-way reconciliation (issue 36) from the fleet database, SQLite or PostgreSQL: per unit, the
 * DEX reads of a period (days in a time zone) plus the last good read before it (the baseline), the unit's
 * sales rows (vends delivered, by their approved amount) and the payment service's side as the settlement
 * reconciliation stored it (`recon_lines` of the newest run covering each day: captured minus refunded, per
 * order id). The report itself is never mirrored, so a day no reconciliation run covers has no service side:
 * its windows skip that comparison and say so.
 */
import type { Kysely } from "kysely";
import { z } from "zod";
import type { DexCounters } from "../../../drivers/dex/counters.js";
import type { Minor } from "../../core/money.js";
import { dayStart, nextDay } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";
import type { DexPush } from "./events.js";
import {
  g85Mark,
  goodReads,
  loadDexPushes,
  reconLinesOf,
  runsCovering,
  salesBetween,
  sessionsOf,
  unitsWithReads,
} from "./store.js";
import {
  type DexReadPoint,
  type DexWindow,
  reconcileDex,
  type ServicePayment,
  type UnitVend,
} from "./threeWay.js";

export interface DexPeriod {
  from: string;
  to: string;
  timeZone: string;
  /** Only this unit (default: every unit with a read in the period). */
  unit?: string;
}

export interface UnitDexReport {
  unit: string;
  /** The unit's sales currency (else the machine's ID4 code), null when neither is known. */
  currency: string | null;
  reads: number;
  windows: DexWindow[];
  clean: boolean;
  /** Days of the period with no settlement reconciliation run: the service side is not compared there. */
  uncoveredDays: string[];
  /** A manager marked the machine's G85 as always wrong (its unverified reads are used), or null. */
  g85Mark: { by: string; reason: string; at: number } | null;
}

export interface DexReport {
  from: string;
  to: string;
  timeZone: string;
  units: UnitDexReport[];
  clean: boolean;
  /** Events the machines pushed by themselves in the period (never a window's read). */
  pushes: DexPush[];
}

const CountValue = z.object({ count: z.number().int(), value: z.number().int() }).nullable();
const Counters = z.object({
  paid: CountValue,
  cashless: CountValue,
  cash: CountValue,
  tokens: CountValue,
  cashNet: z.number().int().nullable(),
  products: z.array(
    z.object({
      selection: z.string(),
      name: z.string().nullable(),
      count: z.number().int(),
      value: z.number().int(),
    }),
  ),
  identity: z.object({
    machine: z.string().nullable(),
    board: z.string().nullable(),
    initialised: z.string().nullable(),
  }),
  currency: z.string().nullable(),
});

/** Parses a stored `dex_reads.counters`; null when it is not the shape (a read is then left out). */
export function parseCounters(text: string | null): DexCounters | null {
  if (text === null) return null;
  try {
    const r = Counters.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to && out.length < 3700; d = nextDay(d)) out.push(d);
  return out;
}

/** Good reads of the period (each with its G85 result), with the last verified read before it as the baseline. */
async function loadReads(
  db: Kysely<FleetDatabase>,
  unit: string,
  start: number,
  end: number,
  marked: boolean,
): Promise<DexReadPoint[]> {
  const point = (r: {
    read_id: string;
    at: number | string;
    counters: string | null;
    g85: string | null;
  }): DexReadPoint[] => {
    const c = parseCounters(r.counters);
    return c === null ? [] : [{ readId: r.read_id, at: Number(r.at), counters: c, g85: r.g85 }];
  };
  const { before, within } = await goodReads(db, unit, start, end, marked);
  return before.concat(within).flatMap(point);
}

/** The newest settlement run covering each day, or none. */
async function runsByDay(db: Kysely<FleetDatabase>, list: readonly string[]): Promise<Map<string, number>> {
  const first = list[0];
  const last = list[list.length - 1];
  const out = new Map<string, number>();
  if (first === undefined || last === undefined) return out;
  const runs = await runsCovering(db, first, last);
  for (const d of list) {
    const r = runs.find((x) => x.from_day <= d && x.to_day >= d);
    if (r !== undefined) out.set(d, Number(r.id));
  }
  return out;
}

/** Lines holding a payment the service reported (a `missingInReport` line holds none: the order is absent). */
const CAPTURE = new Set(["matched", "amountMismatch", "unknownInFleet"]);
const REFUND = new Set(["refundMatched", "refundUnmatched"]);

/**
 * The service's captured minus refunded per order id of one unit, from the stored reconciliation lines, each
 * with the unit's session of that order id (whenever it closed: a sale before the first read stays there).
 */
async function loadService(
  db: Kysely<FleetDatabase>,
  unit: string,
  runs: ReadonlyMap<string, number>,
  dayEnd: (day: string) => number,
): Promise<{ payments: ServicePayment[]; sessions: Map<string, number> }> {
  const byOrder = new Map<string, { at: number; amount: Minor }>();
  for (const [day, runId] of runs) {
    const lines = await reconLinesOf(db, runId, day, unit);
    for (const l of lines) {
      if (l.order_id === null || l.reported === null) continue;
      const sign = CAPTURE.has(l.class) ? 1 : REFUND.has(l.class) ? -1 : 0;
      if (sign === 0) continue;
      const prev = byOrder.get(l.order_id);
      const amount = (prev?.amount ?? 0) + sign * Number(l.reported);
      byOrder.set(l.order_id, { at: prev?.at ?? dayEnd(day), amount });
    }
  }
  const sessions = await sessionsOf(db, unit, [...byOrder.keys()]);
  const payments = [...byOrder].map(([orderId, p]) => ({
    orderId,
    at: sessions.get(orderId) ?? p.at,
    amount: p.amount,
  }));
  return { payments, sessions };
}

/** One unit's three-way report for the period. */
async function unitReport(
  db: Kysely<FleetDatabase>,
  unit: string,
  p: DexPeriod,
  runs: ReadonlyMap<string, number>,
): Promise<UnitDexReport> {
  const start = dayStart(p.from, p.timeZone);
  const end = dayStart(nextDay(p.to), p.timeZone);
  const markRow = await g85Mark(db, unit);
  const mark =
    markRow === null
      ? null
      : { by: markRow.marked_by, reason: markRow.reason, at: Number(markRow.marked_at) };
  const reads = await loadReads(db, unit, start, end, mark !== null);
  const since = reads[0]?.at ?? start;
  const last = reads[reads.length - 1]?.at ?? end;
  const sales = await salesBetween(db, unit, since, last);
  const vends: UnitVend[] = sales
    .filter((s) => Number(s.vends_ok) > 0)
    .map((s) => ({ orderId: s.order_id, at: Number(s.closed_at), amount: Number(s.approved) }));
  // A line the fleet has no sale for is known by its day only: it joins that day's last window.
  const dayEnd = (day: string) => Math.min(dayStart(nextDay(day), p.timeZone) - 1, last);
  const { payments, sessions } = await loadService(db, unit, runs, dayEnd);
  const all = days(p.from, p.to);
  const uncoveredDays = all.filter((d) => !runs.has(d));
  const result = reconcileDex({
    reads,
    vends,
    payments,
    sessions,
    serviceCompared: uncoveredDays.length === 0,
    g85Marked: mark !== null,
  });
  const currency = sales[0]?.currency ?? reads[0]?.counters.currency ?? null;
  const { windows, clean } = result;
  return { unit, currency, reads: reads.length, windows, clean, uncoveredDays, g85Mark: mark };
}

/** The three-way report of every unit with a DEX read in the period (or of `p.unit`). */
export async function loadDexReport(db: Kysely<FleetDatabase>, p: DexPeriod): Promise<DexReport> {
  const start = dayStart(p.from, p.timeZone);
  const end = dayStart(nextDay(p.to), p.timeZone);
  const unitIds = await unitsWithReads(db, start, end, p.unit);
  const runs = await runsByDay(db, days(p.from, p.to));
  const units: UnitDexReport[] = [];
  for (const u of unitIds) units.push(await unitReport(db, u, p, runs));
  const pushes = await loadDexPushes(db, start, end, p.unit);
  return { from: p.from, to: p.to, timeZone: p.timeZone, units, clean: units.every((u) => u.clean), pushes };
}
