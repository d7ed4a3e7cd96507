/**
 * The values pages (issue 41): one group (its units, its values; managers add and remove units, rename or
 * delete it, set and unset values) and one unit's values (its own, editable, and those its groups give it).
 */
import { type Html, html } from "../web/html.js";
import { layout, type PageContext, time, unitHref } from "../web/pages.js";
import type { HeldValue } from "./rows.js";

function csrf(pc: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${pc.session.csrf}">`;
}

export function groupHref(name: string): string {
  return `/groups/${encodeURIComponent(name)}`;
}

const shown = (v: unknown): string => JSON.stringify(v);

/** A table of values; managers get an Unset button on each. */
function valuesTable(
  pc: PageContext,
  scope: "unit" | "group",
  target: string,
  values: readonly HeldValue[],
): Html {
  if (values.length === 0)
    return html`<p class="muted" id="values-none">No values: every key comes from the layers under this one.</p>`;
  const manager = pc.session.role === "manager";
  return html`<table class="values"><thead><tr><th>Key</th><th>Value</th><th>Set by</th><th>At</th>${manager ? html`<th></th>` : ""}</tr></thead><tbody>${values.map(
    (v) =>
      html`<tr data-key="${v.key}"><td><code>${v.key}</code></td><td class="value"><code>${shown(v.value)}</code></td><td>${v.updatedBy}</td><td>${time(v.updatedAt, pc.timeZone)}</td>${
        manager
          ? html`<td><form method="post" action="/values/unset" class="inline">${csrf(pc)}<input type="hidden" name="scope" value="${scope}"><input type="hidden" name="target" value="${target}"><input type="hidden" name="key" value="${v.key}"><button type="submit">Unset</button></form></td>`
          : ""
      }</tr>`,
  )}</tbody></table>`;
}

function setForm(pc: PageContext, scope: "unit" | "group", target: string): Html | string {
  if (pc.session.role !== "manager") return "";
  return html`<form method="post" action="/values/set" id="set-value">${csrf(pc)}<input type="hidden" name="scope" value="${scope}"><input type="hidden" name="target" value="${target}">
<label>Key <input name="key" required maxlength="200" placeholder="display.idleText"></label>
<label>Value <input name="value" required maxlength="4096"></label>
<button type="submit">Set</button></form>
<p class="muted">A key of the unit config, never an identity key (unit id and name, point of sale, merchant, key and secrets files, devices, state paths): those live only on the unit.</p>`;
}

export function groupPage(
  pc: PageContext,
  name: string,
  units: readonly string[],
  values: readonly HeldValue[],
): string {
  const manager = pc.session.role === "manager";
  const unitRows = units.map(
    (u) =>
      html`<li data-unit="${u}"><a href="${unitHref(u)}">${u}</a>${
        manager
          ? html` <form method="post" action="${groupHref(name)}/remove" class="inline">${csrf(pc)}<input type="hidden" name="units" value="${u}"><button type="submit">Remove</button></form>`
          : ""
      }</li>`,
  );
  const edit = manager
    ? html`<h2>Edit</h2>
<form method="post" action="${groupHref(name)}/add" id="add-units">${csrf(pc)}<label>Add units <input name="units" required maxlength="4000" placeholder="vm-a vm-b"></label> <button type="submit">Add</button></form>
<form method="post" action="${groupHref(name)}/rename" id="rename-group">${csrf(pc)}<label>New name <input name="to" required maxlength="63"></label> <button type="submit">Rename</button></form>
<form method="post" action="${groupHref(name)}/delete" id="delete-group">${csrf(pc)}<button type="submit">Delete the group</button> <span class="muted">(its units stay, out of it; its values go)</span></form>`
    : "";
  const body = html`<h1>Group <span id="group-name">${name}</span></h1>
<h2>Units</h2>${units.length === 0 ? html`<p class="muted">No units.</p>` : html`<ul id="group-units">${unitRows}</ul>`}
<h2>Values</h2><p class="muted">Each unit in the group gets these, over the fleet-wide config file and under its own values.</p>
${valuesTable(pc, "group", name, values)}${setForm(pc, "group", name)}${edit}`;
  return layout(pc, "/groups", `Group ${name}`, body);
}

export function unitValuesPage(
  pc: PageContext,
  unitId: string,
  groups: readonly { name: string; values: readonly HeldValue[] }[],
  own: readonly HeldValue[],
): string {
  const inherited =
    groups.length === 0
      ? html`<p class="muted">The unit is in no group.</p>`
      : html`${groups.map(
          (g) =>
            html`<h3><a href="${groupHref(g.name)}">group:${g.name}</a></h3>${
              g.values.length === 0
                ? html`<p class="muted">No values.</p>`
                : html`<ul>${g.values.map((v) => html`<li><code>${v.key}</code> = <code>${shown(v.value)}</code></li>`)}</ul>`
            }`,
        )}`;
  const body = html`<h1>Values of <a href="${unitHref(unitId)}">${unitId}</a></h1>
<p class="muted">The unit's config is its file's values, under its groups' values (in name order), under its own values here, under its identity. The unit fetches them when its heartbeat says they changed; <code>vendd config print --origin</code> on the unit shows each value's layer.</p>
<h2>This unit's own values</h2>${valuesTable(pc, "unit", unitId, own)}${setForm(pc, "unit", unitId)}
<h2>From its groups</h2>${inherited}`;
  return layout(pc, "/units", `Values of ${unitId}`, body);
}
