/**
 * The units' dashboard pages: the fleet overview, the units list and one unit's page, in the shell's layout
 * (web/pages.ts). Every value is interpolated through the escaping `html` template; chart data travels in a
 * JSON block that /static/app.js reads.
 */
import { FaultData, Heartbeat, VersionData } from "../../core/fleetWire.js";
import { plural } from "../../core/plural.js";
import { rolloutCounts } from "../bundles/index.js";
import { type DailySeries, totalsTable } from "../sales/index.js";
import { type Html, html } from "../web/html.js";
import { ago, jsonBlock, layout, money, type PageContext, time, unitHref } from "../web/pages.js";
import type { Overview, UnitDetail, UnitSummary } from "./rows.js";
import { configShown, releaseShown } from "./versions.js";

/** The noun alone, in the number `n` asks for (the count stands beside it in its own element). */
const noun = (n: number, one: string, many: string): string => (n === 1 ? one : many);

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

const configOf = (u: UnitSummary): string => configShown(u) ?? "–";
const releaseOf = (u: UnitSummary): string => releaseShown(u) ?? "–";

/** A fault event in words: `vmcLink raised: VMC link lost`. */
function faultText(data: unknown): string {
  const f = FaultData.safeParse(data);
  return f.success ? `${f.data.code} ${f.data.state}: ${f.data.message}` : words(data);
}

/** A version event in words: `release 1.5.0 applied (bundle rel-1.5.0): health gate passed`. */
function versionText(data: unknown): string {
  const v = VersionData.safeParse(data);
  if (!v.success) return words(data);
  const d = v.data;
  const outcome = d.outcome === "rolledBack" ? "rolled back" : d.outcome;
  return `${d.kind} ${d.version} ${outcome}${d.bundleId === null ? "" : ` (bundle ${d.bundleId})`}${d.reason === "" ? "" : `: ${d.reason}`}`;
}

function unitsTable(pc: PageContext, units: readonly UnitSummary[], withForms: boolean): Html {
  return html`<table><thead><tr><th>Unit</th><th>Label</th><th>State</th><th>Last seen</th><th>Config</th><th>Release</th>
<th class="num">Backlog</th><th class="num">Unresolved</th><th>Needs a look</th>${withForms ? html`<th></th>` : ""}</tr></thead><tbody>
${units.map(
  (u) => html`<tr><td><a href="${unitHref(u.id)}">${u.id}</a></td><td>${u.label}</td><td>${statusCell(u)}</td>
<td>${time(u.lastSeenAt, pc.timeZone)} <span class="muted">${ago(u.lastSeenAt, pc.now)}</span></td>
<td>${configOf(u)}</td><td>${releaseOf(u)}</td><td class="num">${u.backlogEvents}</td>
<td class="num">${u.unresolved}</td><td class="warn">${u.attention.join("; ")}</td>${withForms ? html`<td>${decisionForms(pc, u)}</td>` : ""}</tr>`,
)}</tbody></table>`;
}

export function overviewPage(pc: PageContext, o: Overview): string {
  const body = html`<div class="cards">
<div class="card"><div class="big online">${o.units.online}</div>${noun(o.units.online, "unit", "units")} online</div>
<div class="card"><div class="big${o.units.offline > 0 ? " offline" : ""}">${o.units.offline}</div>${noun(o.units.offline, "unit", "units")} offline</div>${o.units.stopped > 0 ? html`<div class="card"><div class="big">${o.units.stopped}</div>${noun(o.units.stopped, "unit", "units")} stopped</div>` : ""}
<div class="card"><div class="big${o.units.pending > 0 ? " pending" : ""}">${o.units.pending}</div>pending ${noun(o.units.pending, "enrolment", "enrolments")}</div>
<div class="card"><div class="big">${o.attention.length}</div>${noun(o.attention.length, "unit", "units")} needing a look</div>
<div class="card" id="alert-counts"><div class="big${o.alerts.open > 0 ? " offline" : ""}">${o.alerts.open}</div><a href="/alerts?state=open">open ${noun(o.alerts.open, "alert", "alerts")}</a> (${o.alerts.acknowledged} acknowledged${
    o.alerts.failedDeliveries > 0
      ? html`, ${plural(o.alerts.failedDeliveries, "delivery", "deliveries")} failing`
      : ""
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

/** One stored value in words: nested records as `key value, key value`, nothing as JSON. */
function words(value: unknown): string {
  if (value === null || value === undefined) return "–";
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return value.map(words).join(", ");
  return Object.entries(value)
    .map(([k, v]) => `${k} ${words(v)}`)
    .join(", ");
}

/**
 * The unit's last heartbeat as a table in words: a heartbeat of today's shape (core/fleetWire.ts) with its
 * fields named, any other record field by field; never raw JSON.
 */
function heartbeatTable(value: unknown, timeZone: string): Html {
  const hb = Heartbeat.safeParse(value);
  const rows: [string, string][] = [];
  if (hb.success) {
    const h = hb.data;
    rows.push(
      ["Sent", time(h.at, timeZone)],
      ["State", h.reason === "" ? h.state : `${h.state} (${h.reason})`],
      [
        "Versions",
        `vendd ${h.versions.vendd}, config ${h.versions.config ?? "as installed"}, release ${h.versions.release ?? "as installed"}`,
      ],
      [
        "Backlog",
        `${plural(h.backlog.events, "event", "events")} not yet sent; last seq ${h.backlog.lastSeq}`,
      ],
      ["Journal", h.journal.ok ? "ok" : `failing: ${h.journal.detail}`],
      ["Vending machine link", h.vmc],
      ["Payment service", h.payment],
      ["Unresolved sessions", String(h.unresolved)],
    );
    if (h.fleet != null) rows.push(["Fleet name", h.fleet]);
  } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) rows.push([k, words(v)]);
  } else rows.push(["Record", words(value)]);
  return html`<table class="heartbeat"><tbody>${rows.map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</tbody></table>`;
}

/** The unit's DEX audit row (issue 42): its latest read, "unverified (G85)" when its file failed G85, and the mark. */
function dexRow(pc: PageContext, dex: UnitDetail["dex"]): Html {
  if (dex === null) return html``;
  const r = dex.lastRead;
  const read =
    r === null
      ? html`no read yet`
      : html`last read ${time(r.at, pc.timeZone)}: ${r.outcome}${r.g85 === "bad" ? html`, <span class="warn">unverified (G85)</span>` : r.g85 === null ? "" : `, G85 ${r.g85}`}`;
  const m = dex.g85Mark;
  const mark =
    m === null
      ? html``
      : html`; <span class="warn">G85 always wrong</span> (marked by ${m.by} on ${time(m.at, pc.timeZone)}: ${m.reason})`;
  return html`<tr><th>DEX audit</th><td>${read}${mark} <a href="/dex">DEX audits</a></td></tr>`;
}

export function unitPage(pc: PageContext, d: UnitDetail): string {
  const u = d.unit;
  const body = html`<table><tbody>
<tr><th>Label</th><td>${u.label}</td></tr>
<tr><th>State</th><td>${statusCell(u)} ${decisionForms(pc, u)}</td></tr>
<tr><th>Fingerprint</th><td><code>${u.fingerprint}</code></td></tr>
<tr><th>Last seen</th><td>${time(u.lastSeenAt, pc.timeZone)} <span class="muted">${ago(u.lastSeenAt, pc.now)}</span></td></tr>
<tr><th>Versions</th><td>config ${configOf(u)}, release ${releaseOf(u)}</td></tr>
<tr><th>Backlog</th><td>${plural(u.backlogEvents, "event", "events")}${
    u.backlogOldestAt === null ? "" : html`, oldest from ${time(u.backlogOldestAt, pc.timeZone)}`
  }; committed up to seq ${u.committedSeq}</td></tr>
<tr><th>Unresolved sessions</th><td>${u.unresolved}</td></tr>
<tr><th>Needs a look</th><td class="warn">${u.attention.join("; ") || "no"}</td></tr>
${dexRow(pc, d.dex)}
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
            html`<tr><td>${time(f.at, pc.timeZone)}</td><td class="num">${f.seq}</td><td>${faultText(f.data)}</td></tr>`,
        )}</tbody></table>`
  }
<h2>Version changes</h2>${
    d.versions.length === 0
      ? html`<p class="muted">None reported.</p>`
      : html`<table><thead><tr><th>At</th><th class="num">Seq</th><th>Change</th></tr></thead><tbody>${d.versions.map(
          (f) =>
            html`<tr><td>${time(f.at, pc.timeZone)}</td><td class="num">${f.seq}</td><td>${versionText(f.data)}</td></tr>`,
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
<h2>Last heartbeat</h2>${d.heartbeat === null ? html`<p class="muted">No heartbeat yet.</p>` : heartbeatTable(d.heartbeat, pc.timeZone)}`;
  return layout(pc, "/units", `Unit ${u.id}`, body);
}
