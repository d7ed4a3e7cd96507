/** The reconciliation pages' queries over `recon_runs` / `recon_lines` (views.ts renders what they return). */
import type { Kysely } from "kysely";
import { z } from "zod";
import type { FleetDatabase } from "../db/schema.js";
import { LINE_CLASSES, type LineClass, previousDay, type ReconLine } from "./match.js";
import { type DayRow, GOOD, type LineFilter, type RunSummary, type UnitRow } from "./rows.js";

const Summary = z.object({
  counts: z.record(z.string(), z.number()),
  transfers: z.array(
    z.object({
      paymentPointId: z.string(),
      reference: z.string(),
      date: z.string(),
      // Runs from before issue 30 did not record it.
      currency: z.string().default(""),
      expected: z.number(),
      received: z.number(),
      difference: z.number(),
    }),
  ),
});

function toSummary(r: {
  id: number;
  run_at: number;
  from_day: string;
  to_day: string;
  clean: number;
  summary: string;
}): RunSummary {
  let parsed: z.infer<typeof Summary> = { counts: {}, transfers: [] };
  try {
    const s = Summary.safeParse(JSON.parse(r.summary));
    if (s.success) parsed = s.data;
  } catch {
    // A summary that does not parse shows as empty; the lines are still there.
  }
  return {
    id: Number(r.id),
    runAt: Number(r.run_at),
    from: r.from_day,
    to: r.to_day,
    clean: Number(r.clean) === 1,
    counts: parsed.counts,
    transfers: parsed.transfers,
  };
}

/** The latest runs, newest first. */
export async function listRuns(db: Kysely<FleetDatabase>, limit = 30): Promise<RunSummary[]> {
  const rows = await db.selectFrom("recon_runs").selectAll().orderBy("id", "desc").limit(limit).execute();
  return rows.map(toSummary);
}

export async function getRun(db: Kysely<FleetDatabase>, id: number): Promise<RunSummary | null> {
  const r = await db.selectFrom("recon_runs").selectAll().where("id", "=", id).executeTakeFirst();
  return r === undefined ? null : toSummary(r);
}

/** Per sales day of a run: its transfers' totals and how many lines did not reconcile. */
export async function runDays(db: Kysely<FleetDatabase>, run: RunSummary): Promise<DayRow[]> {
  const counts = await db
    .selectFrom("recon_lines")
    .select(["day", "class", (eb) => eb.fn.countAll<number>().as("n")])
    .where("run_id", "=", run.id)
    .where("class", "!=", "transfer")
    .groupBy(["day", "class"])
    .execute();
  const days = new Map<string, DayRow>();
  const row = (day: string, currency: string): DayRow => {
    const key = `${day}|${currency}`;
    let d = days.get(key);
    if (d === undefined) {
      d = { day, currency, transfers: [], expected: 0, received: 0, difference: 0, lines: 0, problems: 0 };
      days.set(key, d);
    }
    return d;
  };
  // Transfers first, so a day's line counts go to its (first) currency row.
  for (const t of run.transfers) {
    const d = row(previousDay(t.date), t.currency);
    d.transfers.push(t);
    d.expected += t.expected;
    d.received += t.received;
    d.difference += t.difference;
    if (t.difference !== 0) d.problems += 1;
  }
  const first = new Map<string, DayRow>();
  for (const d of days.values()) if (!first.has(d.day)) first.set(d.day, d);
  for (const c of counts) {
    const d = first.get(c.day) ?? row(c.day, "");
    first.set(c.day, d);
    d.lines += Number(c.n);
    if (!GOOD.has(c.class)) d.problems += Number(c.n);
  }
  return [...days.values()].sort(
    (a, b) => a.day.localeCompare(b.day) || a.currency.localeCompare(b.currency),
  );
}

/** A run's lines (default: those that do not reconcile), filtered by day and unit. */
export async function runLines(
  db: Kysely<FleetDatabase>,
  runId: number,
  f: LineFilter = {},
): Promise<ReconLine[]> {
  let q = db.selectFrom("recon_lines").selectAll().where("run_id", "=", runId);
  if (f.day !== undefined) q = q.where("day", "=", f.day);
  if (f.unit !== undefined) q = q.where("unit_id", "=", f.unit);
  if (!f.all)
    q = q
      .where("class", "not in", ["matched", "refundMatched", "fee"])
      .where((eb) => eb.or([eb("class", "!=", "transfer"), eb("expected", "!=", eb.ref("reported"))]));
  const rows = await q
    .orderBy("day")
    .orderBy("id")
    .limit(f.limit ?? 1000)
    .execute();
  return rows.map((r) => ({
    day: r.day,
    class: (LINE_CLASSES as readonly string[]).includes(r.class) ? (r.class as LineClass) : "transfer",
    unit_id: r.unit_id,
    session_id: r.session_id,
    order_id: r.order_id,
    reference: r.reference,
    expected: r.expected === null ? null : Number(r.expected),
    reported: r.reported === null ? null : Number(r.reported),
    currency: r.currency ?? null,
    reason: r.reason,
  }));
}

/** Per unit of a run (optionally one day): lines and lines that do not reconcile. */
export async function runUnits(db: Kysely<FleetDatabase>, runId: number, day?: string): Promise<UnitRow[]> {
  let q = db
    .selectFrom("recon_lines")
    .select(["unit_id", "class", (eb) => eb.fn.countAll<number>().as("n")])
    .where("run_id", "=", runId)
    .where("class", "!=", "transfer");
  if (day !== undefined) q = q.where("day", "=", day);
  const rows = await q.groupBy(["unit_id", "class"]).execute();
  const units = new Map<string, UnitRow>();
  for (const r of rows) {
    const key = r.unit_id ?? "";
    const u = units.get(key) ?? { unit: r.unit_id, lines: 0, problems: 0 };
    u.lines += Number(r.n);
    if (!GOOD.has(r.class)) u.problems += Number(r.n);
    units.set(key, u);
  }
  return [...units.values()].sort(
    (a, b) => b.problems - a.problems || (a.unit ?? "").localeCompare(b.unit ?? ""),
  );
}
