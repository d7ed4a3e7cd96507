/** The rollouts pages (issue 41): the list, and one rollout with its counts per state and every unit. */
import { type Html, html } from "../web/html.js";
import { layout, type PageContext, time, unitHref } from "../web/pages.js";
import type { RolloutStatus } from "./rows.js";
import { SHOWN_STATES, shownState } from "./rules.js";

export function rolloutsPage(
  pc: PageContext,
  list: readonly { bundleId: string; state: string; failed: number; units: number; createdAt: number }[],
): string {
  const body =
    list.length === 0
      ? html`<p class="muted">No rollouts. Make one with <code>vendd fleet rollout create --bundle FILE</code>.</p>`
      : html`<table><thead><tr><th>Bundle</th><th>State</th><th>Units</th><th>Failed</th><th>Created</th></tr></thead><tbody>${list.map(
          (r) =>
            html`<tr><td><a href="/rollouts/${encodeURIComponent(r.bundleId)}">${r.bundleId}</a></td><td class="${r.state}">${r.state}</td><td>${r.units}</td><td>${r.failed}</td><td>${time(r.createdAt, pc.timeZone)}</td></tr>`,
        )}</tbody></table>`;
  return layout(pc, "/rollouts", "Rollouts", html`<h1>Rollouts</h1>${body}`);
}

function actions(pc: PageContext, r: RolloutStatus): Html | string {
  if (pc.session.role !== "manager") return "";
  const can = {
    pause: r.state === "running",
    resume: r.state === "paused",
    abort: r.state === "running" || r.state === "paused" || r.state === "halted",
  };
  const form = (action: string) =>
    html`<form method="post" action="/rollouts/${encodeURIComponent(r.bundleId)}/${action}" class="inline"><input type="hidden" name="_csrf" value="${pc.session.csrf}"><button type="submit" name="action" value="${action}">${action[0]?.toUpperCase()}${action.slice(1)}</button></form>`;
  return html`<p class="actions">${(["pause", "resume", "abort"] as const).filter((a) => can[a]).map(form)}</p>`;
}

export function rolloutPage(pc: PageContext, r: RolloutStatus): string {
  const counts = new Map<string, number>(SHOWN_STATES.map((s) => [s, 0]));
  for (const u of r.units) {
    const s = shownState(u.state);
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  const body = html`<h1>Rollout of ${r.bundleId}</h1>
<p>${r.kind} ${r.version}: <strong class="rollout-state ${r.state}" id="rollout-state">${r.state}</strong>${r.reason === "" ? "" : html` (${r.reason})`};
phase ${r.currentPhase} of ${r.phases - 1} (0 is the canary); halts when more than ${r.maxFailurePct}% of a phase fail; created by ${r.createdBy} at ${time(r.createdAt, pc.timeZone)}.</p>
${actions(pc, r)}
<table class="counts"><thead><tr>${SHOWN_STATES.map((s) => html`<th>${s}</th>`)}</tr></thead>
<tbody><tr>${SHOWN_STATES.map((s) => html`<td data-state="${s}">${counts.get(s) ?? 0}</td>`)}</tr></tbody></table>
<table class="units"><thead><tr><th>Unit</th><th>Phase</th><th>State</th><th>Reason</th><th>Updated</th></tr></thead><tbody>${r.units.map(
    (u) =>
      html`<tr data-unit="${u.unitId}"><td><a href="${unitHref(u.unitId)}">${u.unitId}</a></td><td>${u.phase === null ? "-" : u.phase === -1 ? "now" : String(u.phase)}</td><td class="${u.state}">${shownState(u.state)}</td><td>${u.reason}</td><td>${time(u.updatedAt, pc.timeZone)}</td></tr>`,
  )}</tbody></table>`;
  return layout(pc, "/rollouts", `Rollout ${r.bundleId}`, body);
}
