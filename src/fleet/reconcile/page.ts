/**
 * The dashboard's reconciliation pages (issue 17): data functions over `recon_runs` / `recon_lines`, and
 * page-body renderers built with web/html.ts (every value escaped). The dashboard wires the routes:
 * - `${base}`                          runs, newest first (renderRunsPage)
 * - `${base}/{runId}`                  per day: transfer, expected, received, difference (renderRunPage)
 * - `${base}/{runId}/lines?day=&unit=&all=1`   the lines and units of a day (renderLinesPage)
 */
import type { Kysely } from "kysely";
import { z } from "zod";
import { formatSignedAmount } from "../../core/money.js";
import type { FleetDatabase } from "../db/schema.js";
import { type Html, html } from "../web/html.js";
import { LINE_CLASSES, type LineClass, previousDay, type ReconLine, type TransferTotal } from "./match.js";

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

export interface RunSummary {
  id: number;
  runAt: number;
  from: string;
  to: string;
  clean: boolean;
  counts: Record<string, number>;
  transfers: TransferTotal[];
}

/** One sales day of a run in one currency (money is never summed across currencies). */
export interface DayRow {
  day: string;
  /** The transfers' currency; "" for a day without transfers (or a run from before issue 30). */
  currency: string;
  /** Transfers made for the day's sales (dated the next day). */
  transfers: TransferTotal[];
  expected: number;
  received: number;
  difference: number;
  lines: number;
  problems: number;
}

export interface UnitRow {
  unit: string | null;
  lines: number;
  problems: number;
}

const GOOD = new Set<string>(["matched", "refundMatched", "fee", "transfer"]);

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

export interface LineFilter {
  day?: string;
  unit?: string;
  /** Every line, not only those that do not reconcile. */
  all?: boolean;
  limit?: number;
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

/** Signed minor units as a decimal. */
export function money(minor: number | null): string {
  if (minor === null) return "";
  return formatSignedAmount(minor);
}

function status(clean: boolean): Html {
  return clean ? html`<span class="ok">reconciles</span>` : html`<span class="bad">does not reconcile</span>`;
}

/** The list of runs. */
export function renderRunsPage(runs: readonly RunSummary[], base = "/reconcile"): Html {
  if (runs.length === 0)
    return html`<h1>Reconciliation</h1>
<div class="empty recon-empty"><p><strong>No reconciliation runs yet.</strong></p>
<p>The nightly job reconciles yesterday at 04:30 in the fleet's time zone (<code>schedules.reconcile</code> in the
fleet config) once the fleet config names the reporting settings (<code>reporting.settingsFile</code>). To reconcile
now, run <code>vendd fleet reconcile --from YYYY-MM-DD --to YYYY-MM-DD</code> on the fleet server; its result appears here.
See docs/reconciliation.md.</p></div>`;
  return html`<h1>Reconciliation</h1>
<table class="recon-runs"><thead><tr><th>run</th><th>days</th><th>run at</th><th>status</th><th>matched</th><th>not reconciled</th></tr></thead><tbody>
${runs.map((r) => {
  const bad = Object.entries(r.counts)
    .filter(([c]) => !GOOD.has(c))
    .reduce((s, [, n]) => s + n, 0);
  return html`<tr><td><a href="${base}/${r.id}">${r.id}</a></td><td>${r.from}${r.to === r.from ? "" : ` – ${r.to}`}</td><td>${new Date(r.runAt).toISOString()}</td><td>${status(r.clean)}</td><td class="num">${r.counts.matched ?? 0}</td><td class="num">${bad}</td></tr>`;
})}
</tbody></table>`;
}

/** One run, per day: transfer, expected, received, difference; links to the day's lines and units. */
export function renderRunPage(run: RunSummary, days: readonly DayRow[], base = "/reconcile"): Html {
  return html`<h1>Reconciliation ${run.from}${run.to === run.from ? "" : ` – ${run.to}`}</h1>
<p>Run ${run.id} at ${new Date(run.runAt).toISOString()}: ${status(run.clean)}</p>
<table class="recon-days"><thead><tr><th>day</th><th>currency</th><th>transfer</th><th>expected</th><th>received</th><th>difference</th><th>lines</th><th>not reconciled</th></tr></thead><tbody>
${days.map(
  (d) =>
    html`<tr class="${d.problems > 0 ? "bad" : "ok"}"><td><a href="${base}/${run.id}/lines?day=${d.day}">${d.day}</a></td><td>${d.currency}</td><td>${d.transfers.map((t) => t.reference).join(", ") || "none"}</td><td class="num">${money(d.expected)}</td><td class="num">${money(d.received)}</td><td class="num">${money(d.difference)}</td><td class="num">${d.lines}</td><td class="num">${d.problems}</td></tr>`,
)}
</tbody></table>`;
}

/** A day's (or the run's) lines, with the units they belong to. */
export function renderLinesPage(
  run: RunSummary,
  lines: readonly ReconLine[],
  units: readonly UnitRow[],
  filter: LineFilter,
  base = "/reconcile",
): Html {
  const dayQ = filter.day === undefined ? "" : `day=${encodeURIComponent(filter.day)}&`;
  return html`<h1>Reconciliation ${filter.day ?? `${run.from} – ${run.to}`}${filter.unit === undefined ? "" : `, unit ${filter.unit}`}</h1>
<p><a href="${base}/${run.id}">run ${run.id}</a> · ${filter.all ? html`<a href="${base}/${run.id}/lines?${dayQ}">only lines that do not reconcile</a>` : html`<a href="${base}/${run.id}/lines?${dayQ}all=1">every line</a>`}</p>
<h2>Units</h2>
<table class="recon-units"><thead><tr><th>unit</th><th>lines</th><th>not reconciled</th></tr></thead><tbody>
${units.map(
  (u) =>
    html`<tr class="${u.problems > 0 ? "bad" : "ok"}"><td>${u.unit === null ? "unknown" : html`<a href="${base}/${run.id}/lines?${dayQ}unit=${encodeURIComponent(u.unit)}">${u.unit}</a>`}</td><td class="num">${u.lines}</td><td class="num">${u.problems}</td></tr>`,
)}
</tbody></table>
<h2>Lines</h2>
<table class="recon-lines"><thead><tr><th>day</th><th>class</th><th>unit</th><th>session</th><th>order</th><th>reference</th><th>expected</th><th>reported</th><th>currency</th><th>reason</th></tr></thead><tbody>
${lines.map(
  (l) =>
    html`<tr class="${l.class}"><td>${l.day}</td><td>${l.class}</td><td>${l.unit_id ?? "?"}</td><td>${l.session_id ?? ""}</td><td>${l.order_id ?? ""}</td><td>${l.reference ?? ""}</td><td class="num">${money(l.expected)}</td><td class="num">${money(l.reported)}</td><td>${l.currency ?? ""}</td><td>${l.reason}</td></tr>`,
)}
</tbody></table>`;
}
