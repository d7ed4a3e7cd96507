/** The groups page (issue 41): every group with its units. */
import { html } from "../web/html.js";
import { layout, type PageContext, unitHref } from "../web/pages.js";
import { GROUP_NAME_RULE } from "./rules.js";

export function groupsPage(pc: PageContext, groups: readonly { name: string; units: string[] }[]): string {
  const body =
    groups.length === 0
      ? html`<p class="muted">No groups. Add units to a group with <code>vendd fleet group add NAME UNIT...</code>.</p>`
      : html`<table><thead><tr><th>Group</th><th>Units</th></tr></thead><tbody>${groups.map(
          (g) =>
            html`<tr><td id="group-${g.name}">${g.name}</td><td>${g.units.map(
              (u, i) => html`${i === 0 ? "" : ", "}<a href="${unitHref(u)}">${u}</a>`,
            )}</td></tr>`,
        )}</tbody></table>`;
  return layout(
    pc,
    "/groups",
    "Groups",
    html`<h1>Groups</h1><p class="muted">Group names: ${GROUP_NAME_RULE}.</p>${body}`,
  );
}
