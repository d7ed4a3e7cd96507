/**
 * Reconciliation's SQL: the pages' queries over `recon_runs` / `recon_lines` (views.ts renders what they
 * return); what a run reads (the fleet's sales, billing rows, session reports) and how it is saved (run.ts).
 */
import type { Kysely } from "kysely";
import { z } from "zod";
import type { ReportLine } from "../../payment/reporting/client.js";
import { dayOf, dayStart, nextDay } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";
import type { InvoicesDatabase } from "../invoices/index.js";
import {
  type BillingRow,
  LINE_CLASSES,
  type LineClass,
  previousDay,
  type ReconLine,
  type ReconResult,
  type SaleRow,
} from "./match.js";
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

/** Every session report of the event log in [start, end) (the `events_kind_at` index): refunds.ts folds them. */
export async function sessionReportsIn(db: Kysely<FleetDatabase>, start: number, end: number) {
  return db
    .selectFrom("events")
    .select(["unit_id", "seq", "data"])
    .where("kind", "=", "session")
    .where("at", ">=", start)
    .where("at", "<", end)
    .execute();
}

/** One session's reports from its close until `start`, newest first (refunds.ts: what it had refunded then). */
export async function sessionReportsBefore(db: Kysely<FleetDatabase>, s: SaleRow, start: number) {
  return db
    .selectFrom("events")
    .select(["seq", "data"])
    .where("unit_id", "=", s.unit_id)
    .where("kind", "=", "session")
    .where("at", ">=", s.closed_at)
    .where("at", "<", start)
    .where("data", "like", `%"sessionId":"${s.session_id}"%`)
    .orderBy("seq", "desc")
    .execute();
}

const SALE_COLUMNS = [
  "unit_id",
  "session_id",
  "order_id",
  "payment_id",
  "driver",
  "captured",
  "refunded",
  "closed_at",
  "day",
  "currency",
] as const;

/** The fleet's sales rows of [from, to] (`sales.day`). */
export async function loadSales(db: Kysely<FleetDatabase>, from: string, to: string): Promise<SaleRow[]> {
  return db
    .selectFrom("sales")
    .select(SALE_COLUMNS)
    .where("day", ">=", from)
    .where("day", "<=", to)
    .execute();
}

/**
 * Sales outside [from, to] whose order id one of `lines` carries (issue 30: a refund or a second capture on
 * a later day is tied to its session whatever day that closed), read through the `sales_order` index in
 * chunks of 500 order ids.
 */
export async function loadRelated(
  db: Kysely<FleetDatabase>,
  from: string,
  to: string,
  lines: readonly ReportLine[],
): Promise<SaleRow[]> {
  const orders = new Set<string>();
  for (const l of lines) if (l.orderId !== null) orders.add(l.orderId);
  const list = [...orders];
  const out: SaleRow[] = [];
  for (let i = 0; i < list.length; i += 500) {
    const rows = await db
      .selectFrom("sales")
      .select(SALE_COLUMNS)
      .where("order_id", "in", list.slice(i, i + 500))
      .where((eb) => eb.or([eb("day", "<", from), eb("day", ">", to)]))
      .execute();
    for (const r of rows) out.push(r);
  }
  return out;
}

/** Sales rows of the given (unit, session) pairs. */
export async function loadSessions(
  db: Kysely<FleetDatabase>,
  keys: readonly { unit: string; session: string }[],
): Promise<SaleRow[]> {
  const out: SaleRow[] = [];
  for (const k of keys) {
    const r = await db
      .selectFrom("sales")
      .select(SALE_COLUMNS)
      .where("unit_id", "=", k.unit)
      .where("session_id", "=", k.session)
      .executeTakeFirst();
    if (r !== undefined) out.push(r);
  }
  return out;
}

/**
 * The payments the fleet asked for itself (issue 18) settled in [from, to] (days in `timeZone`): executed plan
 * charges, captured overages, issued plan refunds (by their last update) and paid invoices (by `paid_at`).
 */
export async function loadBilling(
  db: Kysely<FleetDatabase>,
  from: string,
  to: string,
  timeZone: string,
): Promise<BillingRow[]> {
  const start = dayStart(from, timeZone);
  const end = dayStart(nextDay(to), timeZone);
  const rows: BillingRow[] = [];
  const charges = await db
    .selectFrom("plan_charges")
    .select(["id", "member_id", "amount", "updated_at"])
    .where("state", "=", "executed")
    .where("updated_at", ">=", start)
    .where("updated_at", "<", end)
    .execute();
  for (const c of charges)
    rows.push({
      kind: "planCharge",
      orderId: c.id,
      ref: c.id,
      payer: c.member_id,
      day: dayOf(c.updated_at, timeZone),
      amount: c.amount,
    });
  const overages = await db
    .selectFrom("plan_overages")
    .select(["id", "member_id", "amount", "updated_at"])
    .where("state", "=", "captured")
    .where("updated_at", ">=", start)
    .where("updated_at", "<", end)
    .execute();
  for (const o of overages)
    rows.push({
      kind: "overage",
      orderId: o.id,
      ref: o.id,
      payer: o.member_id,
      day: dayOf(o.updated_at, timeZone),
      amount: o.amount,
    });
  const refunds = await db
    .selectFrom("plan_refunds")
    .select(["id", "member_id", "amount", "updated_at"])
    .where("state", "=", "issued")
    .where("updated_at", ">=", start)
    .where("updated_at", "<", end)
    .execute();
  for (const r of refunds)
    rows.push({
      kind: "planRefund",
      orderId: r.id,
      ref: r.id,
      payer: r.member_id,
      day: dayOf(r.updated_at, timeZone),
      // Requested amounts are always stored (a full refund stores what was left).
      amount: r.amount ?? 0,
    });
  // The invoice tables exist in every fleet database (migration 0003_invoices); only the static type widens.
  const invoices = await (db as unknown as Kysely<InvoicesDatabase>)
    .selectFrom("invoices")
    .select(["id", "company_id", "issuer_id", "number", "total", "paid_at"])
    .where("status", "=", "paid")
    .where("paid_at", ">=", start)
    .where("paid_at", "<", end)
    .execute();
  for (const i of invoices)
    rows.push({
      kind: "invoice",
      orderId: String(i.number),
      point: i.issuer_id,
      ref: i.id,
      payer: i.company_id,
      day: dayOf(i.paid_at ?? start, timeZone),
      amount: i.total,
    });
  return rows;
}

/** Stores a result; returns the run id. */
export async function saveRun(db: Kysely<FleetDatabase>, r: ReconResult, runAt: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const run = await tx
      .insertInto("recon_runs")
      .values({
        run_at: runAt,
        from_day: r.from,
        to_day: r.to,
        clean: r.clean ? 1 : 0,
        summary: JSON.stringify({ counts: r.counts, transfers: r.transfers, totals: r.totals }),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const runId = Number(run.id);
    for (let i = 0; i < r.lines.length; i += 500) {
      await tx
        .insertInto("recon_lines")
        .values(r.lines.slice(i, i + 500).map((l: ReconLine) => ({ run_id: runId, ...l })))
        .execute();
    }
    return runId;
  });
}
