/**
 * The dashboard's pages, server-rendered with the escaping `html` template: every value from a unit, a
 * report or a manager is interpolated, never concatenated. Chart data travels in a
 * `<script type="application/json">` block (never executed; `<` escaped) that /static/app.js reads.
 */
import { formatMoney } from "../../core/money.js";
import type { Session } from "./accounts.js";
import { type Html, html, raw } from "./html.js";
import type {
  BundleSummary,
  DailySeries,
  Overview,
  SalesRow,
  Totals,
  UnitDetail,
  UnitSummary,
} from "./queries.js";

export interface PageContext {
  session: Session;
  timeZone: string;
  now: number;
  /** Nav entries after the built-in ones (the pages other modules mount in the dashboard). */
  extraNav?: readonly (readonly [string, string])[];
  /** Where managers upload bundles from the browser, if the server offers it. */
  bundleUploadHref?: string;
}

/** Minor units as a decimal string with the currency's digits; negative nets keep their sign. */
export function money(minor: number | bigint, currency: string): string {
  return formatMoney(minor, currency);
}

export function time(ms: number | null, timeZone: string): string {
  if (ms === null) return "never";
  return new Intl.DateTimeFormat("sv-SE", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).format(new Date(ms));
}

function ago(ms: number | null, now: number): string {
  if (ms === null) return "";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

const NAV: readonly [string, string][] = [
  ["/", "Overview"],
  ["/units", "Units"],
  ["/sales", "Sales"],
  ["/bundles", "Bundles"],
];

export function unitHref(id: string): string {
  return `/units/${encodeURIComponent(id)}`;
}

/** The JSON for a `<script type="application/json">` block: `<`, `>` and `&` escaped so no tag can close it. */
export function jsonBlock(id: string, value: unknown): Html {
  const json = JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026");
  return html`<script type="application/json" id="${id}">${raw(json)}</script>`;
}

function head(title: string): Html {
  return html`<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · vendd fleet</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/uPlot.min.css"><link rel="stylesheet" href="/static/app.css">
<script src="/static/uPlot.iife.min.js" defer></script><script src="/static/app.js" defer></script></head>`;
}

/** `ownHeading`: the body brings its own `<h1>` (pages rendered by other modules). */
export function layout(pc: PageContext, path: string, title: string, body: Html, ownHeading = false): string {
  const nav = [...NAV, ...(pc.extraNav ?? [])].map(
    ([href, label]) => html`<a href="${href}"${href === path ? raw(' class="here"') : ""}>${label}</a>`,
  );
  return html`<!doctype html><html lang="en">${head(title)}<body>
<header><span class="brand">vendd fleet</span><nav>${nav}</nav>
<span class="who">${pc.session.username} (${pc.session.role})</span>
<form method="post" action="/logout"><input type="hidden" name="_csrf" value="${pc.session.csrf}"><button type="submit">Log out</button></form>
</header><main>${ownHeading ? "" : html`<h1>${title}</h1>`}
${body}
</main></body></html>`.value;
}

export function loginPage(message: string | null, username = ""): string {
  return html`<!doctype html><html lang="en">${head("Log in")}<body><main>
<form class="login" method="post" action="/login"><h1>vendd fleet</h1>
${message === null ? "" : html`<p class="error" role="alert">${message}</p>`}
<label>User name <input name="username" autocomplete="username" required maxlength="64" value="${username}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required maxlength="1024"></label>
<button type="submit">Log in</button></form></main></body></html>`.value;
}

export function messagePage(title: string, message: string): string {
  return html`<!doctype html><html lang="en">${head(title)}<body><main><h1>${title}</h1><p>${message}</p>
<p><a href="/">Back to the overview</a></p></main></body></html>`.value;
}

function totalsTable(rows: readonly Totals[], empty: string): Html {
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

function chart(id: string, series: DailySeries): Html {
  return html`<div class="chart" data-chart="${id}"></div>${jsonBlock(id, series)}`;
}

function statusCell(u: UnitSummary): Html {
  if (u.status !== "approved") return html`<span class="${u.status}">${u.status}</span>`;
  if (u.online) return html`<span class="online">online</span>`;
  return u.stopped ? html`<span class="stopped">stopped</span>` : html`<span class="offline">offline</span>`;
}

function decisionForms(pc: PageContext, u: UnitSummary): Html {
  if (pc.session.role !== "manager") return html``;
  const base = unitHref(u.id);
  const csrf = html`<input type="hidden" name="_csrf" value="${pc.session.csrf}">`;
  return html`${
    u.status === "pending"
      ? html`<form class="inline" method="post" action="${base}/approve">${csrf}<button type="submit">Approve</button></form>`
      : ""
  }${
    u.status !== "revoked"
      ? html`<form class="inline" method="post" action="${base}/revoke">${csrf}<button type="submit">Revoke</button></form>`
      : ""
  }`;
}

function unitsTable(pc: PageContext, units: readonly UnitSummary[], withForms: boolean): Html {
  return html`<table><thead><tr><th>Unit</th><th>Label</th><th>State</th><th>Last seen</th><th>Config</th><th>Release</th>
<th class="num">Backlog</th><th class="num">Unresolved</th><th>Needs a look</th>${withForms ? html`<th></th>` : ""}</tr></thead><tbody>
${units.map(
  (u) => html`<tr><td><a href="${unitHref(u.id)}">${u.id}</a></td><td>${u.label}</td><td>${statusCell(u)}</td>
<td>${time(u.lastSeenAt, pc.timeZone)} <span class="muted">${ago(u.lastSeenAt, pc.now)}</span></td>
<td>${u.configVersion ?? "–"}</td><td>${u.releaseVersion ?? "–"}</td><td class="num">${u.backlogEvents}</td>
<td class="num">${u.unresolved}</td><td class="warn">${u.attention.join("; ")}</td>${withForms ? html`<td>${decisionForms(pc, u)}</td>` : ""}</tr>`,
)}</tbody></table>`;
}

function rolloutCounts(b: BundleSummary): Html {
  return html`<span class="pending">${b.counts.pending} pending</span>, <span class="applied">${b.counts.applied} applied</span>,
<span class="rolledBack">${b.counts.rolledBack} rolled back</span>`;
}

export function overviewPage(pc: PageContext, o: Overview): string {
  const body = html`<div class="cards">
<div class="card"><div class="big online">${o.units.online}</div>units online</div>
<div class="card"><div class="big${o.units.offline > 0 ? " offline" : ""}">${o.units.offline}</div>units offline</div>${o.units.stopped > 0 ? html`<div class="card"><div class="big">${o.units.stopped}</div>units stopped</div>` : ""}
<div class="card"><div class="big${o.units.pending > 0 ? " pending" : ""}">${o.units.pending}</div>pending enrolments</div>
<div class="card"><div class="big">${o.attention.length}</div>units needing a look</div>
<div class="card" id="alert-counts"><div class="big${o.alerts.open > 0 ? " offline" : ""}">${o.alerts.open}</div><a href="/alerts?state=open">open alerts</a> (${o.alerts.acknowledged} acknowledged${
    o.alerts.failedDeliveries > 0 ? html`, ${o.alerts.failedDeliveries} deliveries failing` : ""
  })</div>
</div>
<h2>Sales today (${o.today})</h2>${totalsTable(o.todayTotals, "No sales today.")}
<h2>Sales this week (${o.weekFrom} to ${o.today})</h2>${totalsTable(o.weekTotals, "No sales this week.")}
<h2>Net sales per day, last ${o.chart.days.length} days</h2>${chart("overview-chart", o.chart)}
<h2>Offline units</h2>${o.offline.length === 0 ? html`<p class="muted">Every approved unit is online.</p>` : unitsTable(pc, o.offline, false)}
<h2>Units with unresolved sessions or a growing backlog</h2>${
    o.attention.length === 0 ? html`<p class="muted">None.</p>` : unitsTable(pc, o.attention, false)
  }
<h2>Pending enrolments</h2>${o.pending.length === 0 ? html`<p class="muted">None.</p>` : unitsTable(pc, o.pending, true)}
<h2>Rollouts</h2>${
    o.bundles.length === 0
      ? html`<p class="muted">No bundles uploaded.</p>`
      : html`<table><thead><tr><th>Bundle</th><th>Kind</th><th>Version</th><th>Rollout</th></tr></thead><tbody>${o.bundles.map(
          (b) =>
            html`<tr><td><a href="/bundles#${b.id}">${b.id}</a>${b.verified ? "" : html` <span class="warn">unverified</span>`}</td><td>${b.kind}</td><td>${b.version}</td><td>${rolloutCounts(b)}</td></tr>`,
        )}</tbody></table>`
  }`;
  return layout(pc, "/", "Fleet overview", body);
}

export function unitsPage(pc: PageContext, units: readonly UnitSummary[]): string {
  const pending = units.filter((u) => u.status === "pending");
  const others = units.filter((u) => u.status !== "pending");
  const body = html`<h2>Pending enrolments</h2>${
    pending.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<p class="muted">Compare each fingerprint with the one the unit printed (<code>vendd fleet enroll</code>) before approving.</p>
<table><thead><tr><th>Unit</th><th>Label</th><th>Fingerprint</th><th>Enrolled</th><th></th></tr></thead><tbody>${pending.map(
          (
            u,
          ) => html`<tr><td><a href="${unitHref(u.id)}">${u.id}</a></td><td>${u.label}</td><td><code>${u.fingerprint}</code></td>
<td>${time(u.enrolledAt, pc.timeZone)}</td><td>${decisionForms(pc, u)}</td></tr>`,
        )}</tbody></table>`
  }
<h2>Units</h2>${others.length === 0 ? html`<p class="muted">No units yet.</p>` : unitsTable(pc, others, true)}`;
  return layout(pc, "/units", "Units", body);
}

function jsonDetails(value: unknown): Html {
  return html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
}

export function unitPage(pc: PageContext, d: UnitDetail): string {
  const u = d.unit;
  const body = html`<table><tbody>
<tr><th>Label</th><td>${u.label}</td></tr>
<tr><th>State</th><td>${statusCell(u)} ${decisionForms(pc, u)}</td></tr>
<tr><th>Fingerprint</th><td><code>${u.fingerprint}</code></td></tr>
<tr><th>Last seen</th><td>${time(u.lastSeenAt, pc.timeZone)} <span class="muted">${ago(u.lastSeenAt, pc.now)}</span></td></tr>
<tr><th>Versions</th><td>config ${u.configVersion ?? "–"}, release ${u.releaseVersion ?? "–"}</td></tr>
<tr><th>Backlog</th><td>${u.backlogEvents} events${
    u.backlogOldestAt === null ? "" : html`, oldest from ${time(u.backlogOldestAt, pc.timeZone)}`
  }; committed up to seq ${u.committedSeq}</td></tr>
<tr><th>Unresolved sessions</th><td>${u.unresolved}</td></tr>
<tr><th>Needs a look</th><td class="warn">${u.attention.join("; ") || "no"}</td></tr>
</tbody></table>
<h2>Net sales per day, last 30 days</h2>${chart("unit-chart", d.chart)}
${totalsTable(d.totals30, "No sales in the last 30 days.")}
<h2>Recent vends</h2>${
    d.recentVends.length === 0
      ? html`<p class="muted">No vends reported.</p>`
      : html`<table><thead><tr><th>Closed</th><th>Session</th><th>Order</th><th class="num">Item</th><th class="num">Price</th><th>Result</th>
<th class="num">Captured</th><th class="num">Refunded</th><th class="num">Vends ok/failed</th></tr></thead><tbody>${d.recentVends.map(
          (
            v,
          ) => html`<tr><td>${time(v.closedAt, pc.timeZone)}</td><td>${v.sessionId}</td><td>${v.orderId}</td><td class="num">${v.item}</td>
<td class="num">${money(v.price, v.currency)}</td><td class="${v.result === "captured" ? "applied" : v.result === "unsettled" ? "bad" : ""}">${v.result}</td>
<td class="num">${money(v.captured, v.currency)} ${v.currency}</td><td class="num">${money(v.refunded, v.currency)}</td>
<td class="num">${v.vendsOk}/${v.vendsFailed}</td></tr>`,
        )}</tbody></table>`
  }
<h2>Faults</h2>${
    d.faults.length === 0
      ? html`<p class="muted">No faults reported.</p>`
      : html`<table><thead><tr><th>At</th><th class="num">Seq</th><th>Fault</th></tr></thead><tbody>${d.faults.map(
          (f) =>
            html`<tr><td>${time(f.at, pc.timeZone)}</td><td class="num">${f.seq}</td><td><code>${JSON.stringify(f.data)}</code></td></tr>`,
        )}</tbody></table>`
  }
<h2>Version changes</h2>${
    d.versions.length === 0
      ? html`<p class="muted">None reported.</p>`
      : html`<table><thead><tr><th>At</th><th class="num">Seq</th><th>Change</th></tr></thead><tbody>${d.versions.map(
          (f) =>
            html`<tr><td>${time(f.at, pc.timeZone)}</td><td class="num">${f.seq}</td><td><code>${JSON.stringify(f.data)}</code></td></tr>`,
        )}</tbody></table>`
  }
<h2>Bundles</h2>${
    d.bundles.length === 0
      ? html`<p class="muted">No rollouts to this unit.</p>`
      : html`<table><thead><tr><th>Bundle</th><th>Version</th><th>State</th><th>Reason</th><th>Updated</th></tr></thead><tbody>${d.bundles.flatMap(
          (b) =>
            b.rollouts.map(
              (r) => html`<tr><td><a href="/bundles#${b.id}">${b.id}</a></td><td>${b.kind} ${b.version}</td>
<td class="${r.state}">${r.state}</td><td>${r.reason}</td><td>${time(r.updatedAt, pc.timeZone)}</td></tr>`,
            ),
        )}</tbody></table>`
  }
<h2>Last heartbeat</h2>${d.heartbeat === null ? html`<p class="muted">No heartbeat yet.</p>` : jsonDetails(d.heartbeat)}`;
  return layout(pc, "/units", `Unit ${u.id}`, body);
}

export interface SalesView {
  from: string;
  to: string;
  unit: string | undefined;
  units: readonly UnitSummary[];
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

export function bundlesPage(pc: PageContext, bundles: readonly BundleSummary[]): string {
  const upload =
    pc.bundleUploadHref !== undefined && pc.session.role === "manager"
      ? html`<p><a href="${pc.bundleUploadHref}">Upload a bundle</a></p>`
      : "";
  const list =
    bundles.length === 0
      ? html`<p class="muted">No bundles uploaded. Upload signed bundles with <code>vendd fleet bundle</code>.</p>`
      : html`${bundles.map(
          (b) => html`<h2 id="${b.id}">${b.id}${
            b.verified
              ? ""
              : html` <span class="warn" title="The fleet has no bundle keys (bundleKeys) to check its signature with.">unverified</span>`
          }</h2>
<p>${b.kind} ${b.version}, targets ${b.targets.join(", ")}; ${b.size} bytes, sha256 <code>${b.sha256}</code>;
uploaded by ${b.uploadedBy} at ${time(b.uploadedAt, pc.timeZone)}${b.expiresAt === null ? "" : html`; expires ${time(b.expiresAt, pc.timeZone)}`}.</p>
<p>${rolloutCounts(b)}</p>${
            b.rollouts.length === 0
              ? html`<p class="muted">No unit has reported on this bundle yet.</p>`
              : html`<table><thead><tr><th>Unit</th><th>State</th><th>Reason</th><th>Updated</th></tr></thead><tbody>${b.rollouts.map(
                  (
                    r,
                  ) => html`<tr><td><a href="${unitHref(r.unitId)}">${r.unitId}</a></td><td class="${r.state}">${r.state}</td>
<td>${r.reason}</td><td>${time(r.updatedAt, pc.timeZone)}</td></tr>`,
                )}</tbody></table>`
          }`,
        )}`;
  return layout(pc, "/bundles", "Bundles", html`${upload}${list}`);
}
