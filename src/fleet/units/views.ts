/**
 * The units' dashboard pages: the fleet overview, the units list and one unit's page, in the shell's layout
 * (web/pages.ts). Every value is interpolated through the escaping `html` template; chart data travels in a
 * JSON block that /static/app.js reads.
 */
import { rolloutCounts } from "../bundles/index.js";
import { type DailySeries, totalsTable } from "../sales/index.js";
import { type Html, html } from "../web/html.js";
import { ago, jsonBlock, layout, money, type PageContext, time, unitHref } from "../web/pages.js";
import type { Overview, UnitDetail, UnitSummary } from "./rows.js";

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
${
  // Issue 41: the values the fleet holds for it (the server with groups and values; not the demo's).
  pc.extraNav?.some(([href]) => href === "/groups") === true
    ? html`<tr><th>Config values</th><td><a id="unit-values" href="/units/${encodeURIComponent(u.id)}/values">this unit's and its groups' values</a></td></tr>`
    : ""
}
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
