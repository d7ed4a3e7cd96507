/**
 * The dashboard's reconciliation pages (issue 17): page-body renderers built with web/html.ts (every value
 * escaped), over the rows store.ts reads from `recon_runs` / `recon_lines`. routes.ts wires them:
 * - `${base}`                          runs, newest first (renderRunsPage)
 * - `${base}/{runId}`                  per day: transfer, expected, received, difference (renderRunPage)
 * - `${base}/{runId}/lines?day=&unit=&all=1`   the lines and units of a day (renderLinesPage)
 */
import { formatSignedAmount } from "../../core/money.js";
import { type Html, html } from "../web/html.js";
import type { ReconLine } from "./match.js";
import { type DayRow, GOOD, type LineFilter, type RunSummary, type UnitRow } from "./rows.js";

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
