/**
 * The dashboard's DEX audits page (issue 36): per unit and window between two DEX reads, the three-way
 * result (classes, amounts, currency, notes such as a counter reset's new baseline), the machine's per
 * product sales (PA2 change) and a CSV link. Every value is escaped by web/html.ts.
 */
import { formatSignedAmount, type Minor } from "../../core/money.js";
import { type Html, html } from "../web/html.js";
import type { DexReport } from "./load.js";
import { cleanVerdict, type DexRow, dexRows } from "./output.js";

const money = (m: Minor | null): string => (m === null ? "–" : formatSignedAmount(m));

function rowHtml(r: DexRow): Html {
  return html`<tr class="${r.honest ? "ok" : "bad"}"><td>${r.unit}</td><td>${r.from} – ${r.to}</td><td>${r.class}</td><td class="num">${r.count}</td><td class="num">${money(r.amount)}</td><td>${r.currency}</td><td class="num">${r.dexCount ?? "–"} / ${money(r.dexValue)}</td><td class="num">${r.journalCount} / ${money(r.journalValue)}</td><td class="num">${r.serviceCount ?? "–"} / ${money(r.serviceValue)}</td><td>${r.note}</td></tr>`;
}

function products(report: DexReport): Html {
  const rows = report.units.flatMap((u) =>
    u.windows.flatMap((w) =>
      w.products.map(
        (p) =>
          html`<tr><td>${u.unit}</td><td>${new Date(w.from).toISOString()} – ${new Date(w.to).toISOString()}</td><td>${p.selection}</td><td>${p.name ?? ""}</td><td class="num">${p.count}</td><td class="num">${money(p.value)}</td><td>${u.currency ?? ""}</td></tr>`,
      ),
    ),
  );
  if (rows.length === 0) return html``;
  return html`<h2>Sales per product (the machine's PA2)</h2>
<table class="dex-products"><thead><tr><th>unit</th><th>window</th><th>selection</th><th>product</th><th>vends</th><th>value</th><th>currency</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function pushes(report: DexReport): Html {
  if (report.pushes.length === 0) return html``;
  const rows = report.pushes.map(
    (p) =>
      html`<tr><td>${p.unit}</td><td>${new Date(p.at).toISOString()}</td><td>${p.outcome}</td><td>${p.events.length === 0 ? (p.error ?? "") : p.events.map((e) => html`<code>${e}</code><br>`)}</td></tr>`,
  );
  return html`<h2>Events the machines pushed</h2>
<table class="dex-pushes"><thead><tr><th>unit</th><th>received</th><th>outcome</th><th>events (EVA-DTS)</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

/** Machines a manager marked as having a G85 that is always wrong (issue 42), with who, when and why. */
function g85Marks(report: DexReport): Html {
  const marked = report.units.filter((u) => u.g85Mark !== null);
  if (marked.length === 0) return html``;
  const rows = marked.map((u) =>
    u.g85Mark === null
      ? html``
      : html`<tr><td>${u.unit}</td><td>G85 always wrong</td><td>${u.g85Mark.by}</td><td>${new Date(u.g85Mark.at).toISOString()}</td><td>${u.g85Mark.reason}</td></tr>`,
  );
  return html`<h2>Machines marked "G85 always wrong"</h2>
<p>Their reads with a bad G85 are used as they are (each row touched says "unverified (G85)"); <code>vendd fleet dex-g85 --unit ID --clear</code> removes the mark.</p>
<table class="dex-g85"><thead><tr><th>unit</th><th>mark</th><th>by</th><th>since</th><th>why</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

/** The page for a period; `base` is where it is mounted (the CSV is `${base}.csv`). */
export function renderDexPage(report: DexReport, base = "/dex"): Html {
  const q = `from=${encodeURIComponent(report.from)}&to=${encodeURIComponent(report.to)}`;
  const form = html`<form method="get" action="${base}" class="filters"><label>from <input type="date" name="from" value="${report.from}"></label> <label>to <input type="date" name="to" value="${report.to}"></label> <button type="submit">Show</button></form>`;
  const head = html`<h1>DEX audits ${report.from}${report.to === report.from ? "" : ` – ${report.to}`}</h1>
${form}`;
  if (report.units.length === 0)
    return html`${head}
<div class="empty dex-empty"><p><strong>No DEX reads in this period.</strong></p>
<p>A unit reads its vending machine's audit counters when its config has <code>dex.enabled: true</code> and
<code>dex.device</code> (a USB-RS232 adapter on the machine's DEX jack): twice a day by default, or on demand with
<code>dex read</code> in the technician console. Its reads reach the fleet with its other events; two reads make the
first window. The service's side comes from the settlement runs (<code>vendd fleet reconcile</code>). See docs/dex.md.</p></div>`;
  const rows = dexRows(report);
  return html`${head}
<p>${report.clean ? html`<span class="ok">${cleanVerdict(report)}</span>` : html`<span class="bad">differences</span>`} · time zone ${report.timeZone} · <a href="${base}.csv?${q}">CSV</a></p>
<table class="dex-windows"><thead><tr><th>unit</th><th>window</th><th>class</th><th>vends</th><th>amount</th><th>currency</th><th>machine (DA2)</th><th>unit</th><th>service</th><th>note</th></tr></thead><tbody>
${rows.map(rowHtml)}
</tbody></table>
${g85Marks(report)}
${products(report)}
${pushes(report)}`;
}
