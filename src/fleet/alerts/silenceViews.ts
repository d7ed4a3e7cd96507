/**
 * The silences page of the dashboard (`/alerts/silences`, issue 42): silences and maintenance windows,
 * current and expired, with who made them and why; for managers the forms to make, edit and end one (each
 * with the session's CSRF token). Every value a person or a unit wrote goes through the escaping `html`.
 */
import { type Html, html } from "../web/html.js";
import { time } from "../web/pages.js";
import { type Silence, silenceState } from "./routing.js";
import type { SilencedChange } from "./rows.js";
import { ALERT_RULES } from "./schema.js";
import { RULE_TITLES } from "./views.js";

export interface SilencesPageData {
  silences: Silence[];
  silenced: SilencedChange[];
  now: number;
  csrf: string | null;
  timeZone: string;
  message?: string;
  /** What the manager typed, shown again after a refusal. */
  form?: Record<string, string>;
}

const TIME_HINT = "a time with its zone, e.g. 2026-12-03T22:00+01:00";

function matcher(x: Silence): Html {
  const parts: Html[] = [];
  if (x.unitId !== null) parts.push(html`unit ${x.unitId === "*" ? "* (fleet-wide)" : x.unitId}`);
  if (x.group !== null) parts.push(html`group ${x.group}`);
  if (x.rule !== null) parts.push(html`rule ${RULE_TITLES[x.rule]}`);
  return html`${parts.map((p, i) => html`${i === 0 ? "" : ", "}${p}`)}`;
}

function rowForms(x: Silence, d: SilencesPageData): Html | string {
  if (d.csrf === null || silenceState(x, d.now) === "expired") return "";
  const id = encodeURIComponent(x.id);
  return html`<form method="post" action="/alerts/silences/${id}/end" class="inline end"><input type="hidden" name="_csrf" value="${d.csrf}"><button type="submit">End now</button></form>
<form method="post" action="/alerts/silences/${id}/edit" class="inline edit"><input type="hidden" name="_csrf" value="${d.csrf}"><label>Ends <input name="ends" maxlength="40" placeholder="${TIME_HINT}"></label><label>or for <input name="for" maxlength="20" size="6" placeholder="2h"></label><label>Reason <input name="reason" maxlength="500" value="${x.reason}"></label><button type="submit">Save</button></form>`;
}

function table(xs: readonly Silence[], d: SilencesPageData, id: string): Html {
  if (xs.length === 0) return html`<p class="muted" id="${id}-none">None.</p>`;
  return html`<table id="${id}"><thead><tr><th>Kind</th><th>State</th><th>Silences</th><th>Starts</th><th>Ends</th><th>Who</th><th>Why</th><th></th></tr></thead><tbody>${xs.map(
    (x) =>
      html`<tr data-silence="${x.id}"><td>${x.kind === "maintenance" ? "maintenance window" : "silence"}</td><td>${silenceState(x, d.now)}</td><td>${matcher(x)}</td><td>${time(x.startsAt, d.timeZone)}</td><td>${time(x.endsAt, d.timeZone)}</td><td>${x.createdBy}${
        x.updatedBy === null ? "" : html` (changed by ${x.updatedBy}, ${time(x.updatedAt, d.timeZone)})`
      }</td><td>${x.reason}</td><td>${rowForms(x, d)}</td></tr>`,
  )}</tbody></table>`;
}

function createForm(d: SilencesPageData): Html | string {
  if (d.csrf === null) return "";
  const f = d.form ?? {};
  const v = (k: string) => f[k] ?? "";
  const opt = (value: string, label: string, cur: string) =>
    html`<option value="${value}"${value === cur ? html` selected` : ""}>${label}</option>`;
  return html`<h2>New silence or maintenance window</h2>
<form method="post" action="/alerts/silences" class="silence-new"><input type="hidden" name="_csrf" value="${d.csrf}">
<label>Kind <select name="kind">${opt("silence", "silence (from now)", v("kind"))}${opt("maintenance", "maintenance window", v("kind"))}</select></label>
<label>Unit <input name="unit" maxlength="64" value="${v("unit")}"></label>
<label>Group <input name="group" maxlength="63" value="${v("group")}"></label>
<label>Rule <select name="rule">${opt("", "any", v("rule"))}${ALERT_RULES.map((r) => opt(r, RULE_TITLES[r], v("rule")))}</select></label>
<label>Starts <input name="starts" maxlength="40" placeholder="now, or ${TIME_HINT}" value="${v("starts")}"></label>
<label>Ends <input name="ends" maxlength="40" placeholder="${TIME_HINT}" value="${v("ends")}"></label>
<label>or for <input name="for" maxlength="20" placeholder="2h, 90m, 1.5h" value="${v("for")}"></label>
<label>Why <input name="reason" maxlength="500" required value="${v("reason")}"></label>
<button type="submit">Silence</button></form>
<p class="muted">Give at least one of unit, group and rule; each one given must match. Times name their zone; this fleet shows times in ${d.timeZone}.</p>`;
}

export function renderSilencesPage(d: SilencesPageData): Html {
  const current = d.silences.filter((x) => silenceState(x, d.now) !== "expired");
  const expired = d.silences.filter((x) => silenceState(x, d.now) === "expired");
  const kept =
    d.silenced.length === 0
      ? html`<p class="muted" id="silenced-none">No change was silenced.</p>`
      : html`<table id="silenced"><thead><tr><th>When</th><th>Change</th><th>Rule</th><th>Unit</th><th>Detail</th><th>Silenced by</th></tr></thead><tbody>${d.silenced.map(
          (c) =>
            html`<tr data-change="${c.changeId}"><td>${time(c.at, d.timeZone)}</td><td>${c.kind}</td><td>${RULE_TITLES[c.rule]}</td><td>${c.unitId === "*" ? "fleet" : c.unitId}</td><td>${c.detail}</td><td>${c.silenceKind === "maintenance" ? "maintenance window" : "silence"}: ${c.silenceReason ?? c.silenceId}</td></tr>`,
        )}</tbody></table>`;
  return html`<h1>Silences and maintenance windows</h1><p><a href="/alerts">Back to the alerts</a></p>${
    d.message === undefined ? "" : html`<p class="error" role="alert">${d.message}</p>`
  }<p>A change to an alert that a silence matches is recorded (below, and in the alert's history) but not sent. A silence ends by itself at its end.</p>
<h2>Current</h2>${table(current, d, "silences")}${createForm(d)}
<h2>Silenced changes</h2>${kept}
<h2>Expired</h2>${table(expired, d, "silences-expired")}`;
}
