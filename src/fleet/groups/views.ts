/** The groups page (issue 41): every group with its units. */
import { html } from "../web/html.js";
import { layout, type PageContext, unitHref } from "../web/pages.js";
import { GROUP_NAME_RULE } from "./rules.js";

export function groupsPage(pc: PageContext, groups: readonly { name: string; units: string[] }[]): string {
  const body =
    groups.length === 0
      ? html`<p class="muted">No groups. Make one below or with <code>vendd fleet group add NAME UNIT...</code>.</p>`
      : html`<table><thead><tr><th>Group</th><th>Units</th></tr></thead><tbody>${groups.map(
          (g) =>
            html`<tr><td id="group-${g.name}"><a href="/groups/${encodeURIComponent(g.name)}">${g.name}</a></td><td>${g.units.map(
              (u, i) => html`${i === 0 ? "" : ", "}<a href="${unitHref(u)}">${u}</a>`,
            )}</td></tr>`,
        )}</tbody></table>`;
  // A group exists while units carry it: a new one is made with its first units.
  const create =
    pc.session.role === "manager"
      ? html`<h2>New group</h2><form method="post" action="/groups" id="new-group"><input type="hidden" name="_csrf" value="${pc.session.csrf}"><label>Name <input name="name" required maxlength="63"></label> <label>Units <input name="units" required maxlength="4000" placeholder="vm-a vm-b"></label> <button type="submit">Create</button></form>`
      : "";
  return layout(
    pc,
    "/groups",
    "Groups",
    html`<h1>Groups</h1><p class="muted">Group names: ${GROUP_NAME_RULE}.</p>${body}${create}`,
  );
}
