/** The sales page (filter, totals, per day, unit and item, CSV links) in the shell's layout. */
import { type Html, html, raw } from "../web/html.js";
import { layout, money, type PageContext, unitHref } from "../web/pages.js";
import type { SalesRow, Totals, UnitChoice } from "./rows.js";

/** Totals per currency as a table (the sales page, the overview and a unit's page), or `empty` if none. */
export function totalsTable(rows: readonly Totals[], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table><thead><tr><th>Currency</th><th class="num">Sales</th><th class="num">Captured</th>
<th class="num">Refunded</th><th class="num">Net</th><th class="num">Vends ok</th><th class="num">Vend failures</th></tr></thead><tbody>
${rows.map(
  (
    t,
  ) => html`<tr><td>${t.currency}</td><td class="num">${t.sales}</td><td class="num">${money(t.captured, t.currency)}</td>
<td class="num">${money(t.refunded, t.currency)}</td><td class="num">${money(t.net, t.currency)}</td>
<td class="num">${t.vendsOk}</td><td class="num${t.vendsFailed > 0 ? " bad" : ""}">${t.vendsFailed}</td></tr>`,
)}</tbody></table>`;
}

export interface SalesView {
  from: string;
  to: string;
  unit: string | undefined;
  units: readonly UnitChoice[];
  byDay: readonly SalesRow[];
  byUnit: readonly SalesRow[];
  byItem: readonly SalesRow[];
  totals: readonly Totals[];
}

function csvHref(v: SalesView, group: string): string {
  const q = new URLSearchParams({ from: v.from, to: v.to, group });
  if (v.unit !== undefined) q.set("unit", v.unit);
  return `/sales.csv?${q.toString()}`;
}

function salesTable(rows: readonly SalesRow[], keyLabel: string, link: (key: string) => Html): Html {
  if (rows.length === 0) return html`<p class="muted">No sales in this range.</p>`;
  return html`<table><thead><tr><th>${keyLabel}</th><th>Currency</th><th class="num">Sales</th><th class="num">Captured</th>
<th class="num">Refunded</th><th class="num">Net</th><th class="num">Vends ok</th><th class="num">Vend failures</th></tr></thead><tbody>
${rows.map(
  (
    r,
  ) => html`<tr><td>${link(r.key)}</td><td>${r.currency}</td><td class="num">${r.sales}</td><td class="num">${money(r.captured, r.currency)}</td>
<td class="num">${money(r.refunded, r.currency)}</td><td class="num">${money(r.net, r.currency)}</td><td class="num">${r.vendsOk}</td>
<td class="num">${r.vendsFailed}</td></tr>`,
)}</tbody></table>`;
}

export function salesPage(pc: PageContext, v: SalesView): string {
  const body = html`<form class="filter" method="get" action="/sales">
<label>From <input type="date" name="from" value="${v.from}"></label>
<label>To <input type="date" name="to" value="${v.to}"></label>
<label>Unit <select name="unit"><option value="">all units</option>${v.units.map(
    (u) =>
      html`<option value="${u.id}"${u.id === v.unit ? raw(" selected") : ""}>${u.id} ${u.label}</option>`,
  )}</select></label>
<button type="submit">Show</button></form>
<h2>Totals</h2>${totalsTable(v.totals, "No sales in this range.")}
<h2>Per day <a class="csv" href="${csvHref(v, "day")}">CSV</a></h2>${salesTable(v.byDay, "Day", (k) => html`${k}`)}
<h2>Per unit <a class="csv" href="${csvHref(v, "unit")}">CSV</a></h2>${salesTable(
    v.byUnit,
    "Unit",
    (k) => html`<a href="${unitHref(k)}">${k}</a>`,
  )}
<h2>Per product (item) <a class="csv" href="${csvHref(v, "item")}">CSV</a></h2>${salesTable(v.byItem, "Item", (k) => html`${k}`)}`;
  return layout(pc, "/sales", "Sales", body);
}
