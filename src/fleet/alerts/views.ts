/**
 * HTML and text of alerts: the dashboard's alerts page and the mails. Every value from a unit (its label,
 * the detail a rule wrote from unit data) goes through the escaping `html` template.
 */
import { type Html, html } from "../web/html.js";
import { time, unitHref } from "../web/pages.js";
import type { AlertView, DeliveryProblem, DueDelivery } from "./rows.js";
import { ALERT_RULES, type AlertRule } from "./schema.js";

export const RULE_TITLES: Record<AlertRule, string> = {
  offline: "Unit offline",
  silent: "Unit silent",
  vendFailures: "Vend failures",
  stuckMoney: "Stuck money",
  review: "Session for review",
  backlog: "Backlog growing",
  reconciliation: "Reconciliation differences",
  entitlements: "Entitlement list near expiry",
  rollout: "Bundle rolled back",
};

const KIND_WORDS: Record<string, string> = {
  opened: "opened",
  renotified: "still open",
  resolved: "resolved",
  acknowledged: "acknowledged",
  unacknowledged: "acknowledgement taken back",
};

function unitName(a: AlertView): string {
  if (a.unitId === "*") return "the fleet";
  return a.unitLabel === null || a.unitLabel === "" ? a.unitId : `${a.unitId} (${a.unitLabel})`;
}

function linkTo(publicUrl: string | undefined, a: AlertView): string {
  return publicUrl === undefined ? "" : `${publicUrl}/alerts?unit=${encodeURIComponent(a.unitId)}`;
}

function textLine(d: DueDelivery): string {
  return `${RULE_TITLES[d.alert.rule]} ${KIND_WORDS[d.kind] ?? d.kind}: ${unitName(d.alert)}: ${d.detail} [change ${d.changeId}]`;
}

function mailRow(d: DueDelivery): Html {
  return html`<tr><td>${RULE_TITLES[d.alert.rule]}</td><td>${KIND_WORDS[d.kind] ?? d.kind}</td><td>${unitName(d.alert)}</td><td>${d.detail}</td><td>${d.changeId}</td></tr>`;
}

const mailTable = (rows: Html[]) =>
  html`<table><thead><tr><th>Rule</th><th>Change</th><th>Unit</th><th>Detail</th><th>Change id</th></tr></thead><tbody>${rows}</tbody></table>`;

export function singleMail(
  d: DueDelivery,
  publicUrl?: string,
): { subject: string; text: string; html: string } {
  const link = linkTo(publicUrl, d.alert);
  // Subject lines are one line of text: control characters from a unit's label are dropped.
  const subject =
    `${RULE_TITLES[d.alert.rule]} ${KIND_WORDS[d.kind] ?? d.kind}: ${unitName(d.alert)}`.replace(
      /\p{Cc}/gu,
      " ",
    );
  return {
    subject: subject.slice(0, 200),
    text: `${textLine(d)}\n${link === "" ? "" : `\n${link}\n`}`,
    html: html`<!doctype html><html><body><p>${RULE_TITLES[d.alert.rule]} ${KIND_WORDS[d.kind] ?? d.kind}.</p>${mailTable([mailRow(d)])}${
      link === "" ? "" : html`<p><a href="${link}">Open the alerts page</a></p>`
    }</body></html>`.value,
  };
}

export function digestMail(
  ds: readonly DueDelivery[],
  publicUrl?: string,
): { subject: string; text: string; html: string } {
  return {
    subject: `${ds.length} alert changes`,
    text: `${ds.map(textLine).join("\n")}\n${publicUrl === undefined ? "" : `\n${publicUrl}/alerts\n`}`,
    html: html`<!doctype html><html><body><p>${ds.length} alert changes in one evaluation.</p>${mailTable(ds.map(mailRow))}</body></html>`
      .value,
  };
}

export interface AlertsPageData {
  alerts: AlertView[];
  problems: DeliveryProblem[];
  filter: { state?: string; unit?: string; rule?: string };
  csrf: string | null;
  timeZone: string;
  message?: string;
  /** False: this fleet evaluates no alerts (no `alerts` section in its config). */
  enabled: boolean;
}

/** What the page and `vendd fleet alerts` say when alerting is off, and how to switch it on. */
export const ALERTING_OFF =
  'Alerting is off: this fleet\'s config has no alerts section, so no rule is evaluated and nothing is sent. To turn it on, add an alerts section (see docs/alerts.md, "Switching it on") to the file given to vendd fleet serve --config, and restart it.';

function ackForm(a: AlertView, csrf: string | null): Html | string {
  if (csrf === null || a.state === "resolved") return "";
  const [path, label] = a.state === "open" ? ["ack", "Acknowledge"] : ["unack", "Un-acknowledge"];
  return html`<form method="post" action="/alerts/${encodeURIComponent(a.id)}/${path}" class="inline ${path}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">${label}</button></form>`;
}

function unitCell(a: AlertView): Html {
  if (a.unitId === "*") return html`<td>fleet</td>`;
  return html`<td><a href="${unitHref(a.unitId)}">${a.unitId}</a> ${a.unitLabel ?? ""}</td>`;
}

function filterForm(d: AlertsPageData): Html {
  const opt = (v: string, label: string, cur: string | undefined) =>
    html`<option value="${v}"${v === (cur ?? "") ? html` selected` : ""}>${label}</option>`;
  return html`<form method="get" action="/alerts" class="filter">
<label>State <select name="state">${opt("", "open and acknowledged", d.filter.state)}${opt("open", "open", d.filter.state)}${opt(
    "acknowledged",
    "acknowledged",
    d.filter.state,
  )}${opt("resolved", "resolved", d.filter.state)}</select></label>
<label>Unit <input name="unit" maxlength="64" value="${d.filter.unit ?? ""}"></label>
<label>Rule <select name="rule">${opt("", "any", d.filter.rule)}${ALERT_RULES.map((r) => opt(r, RULE_TITLES[r], d.filter.rule))}</select></label>
<button type="submit">Show</button></form>`;
}

export function renderAlertsPage(d: AlertsPageData): Html {
  const rows = d.alerts.map(
    (a) =>
      html`<tr class="alert-${a.state}" data-alert="${a.id}"><td>${a.state}</td><td>${RULE_TITLES[a.rule]}</td>${unitCell(a)}<td>${a.detail}</td><td>${time(a.openedAt, d.timeZone)}</td><td>${
        a.acknowledgedBy === null ? "" : html`${a.acknowledgedBy}, ${time(a.acknowledgedAt, d.timeZone)}`
      }</td><td>${a.resolvedAt === null ? "" : time(a.resolvedAt, d.timeZone)}</td><td>${ackForm(a, d.csrf)}</td></tr>`,
  );
  const problems =
    d.problems.length === 0
      ? html`<p class="muted">Every delivery went out.</p>`
      : html`<table id="delivery-problems"><thead><tr><th>Channel</th><th>State</th><th>Attempts</th><th>Last error</th><th>Alert</th><th>Change id</th></tr></thead><tbody>${d.problems.map(
          (p) =>
            html`<tr><td>${p.channel}</td><td>${p.state === "failed" ? "failed" : "retrying"}</td><td>${p.attempts}</td><td>${p.lastError ?? ""}</td><td>${RULE_TITLES[p.rule]} · ${p.unitId}</td><td>${p.changeId}</td></tr>`,
        )}</tbody></table>`;
  return html`<h1>Alerts</h1><p><a href="/alerts/silences" id="silences-link">Silences and maintenance windows</a></p>${d.enabled ? "" : html`<p class="notice" id="alerting-off">${ALERTING_OFF}</p>`}${d.message === undefined ? "" : html`<p class="error" role="alert">${d.message}</p>`}${filterForm(d)}
${
  d.alerts.length === 0
    ? html`<p class="muted" id="no-alerts">No alerts.</p>`
    : html`<table id="alerts"><thead><tr><th>State</th><th>Rule</th><th>Unit</th><th>Detail</th><th>Opened</th><th>Acknowledged</th><th>Resolved</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
}
<h2>Delivery problems</h2>${problems}`;
}
