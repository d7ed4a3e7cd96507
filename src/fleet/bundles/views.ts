/** The bundles page: every bundle with its rollout to the units, in the shell's layout. */
import { expiryText } from "../../core/days.js";
import { type Html, html } from "../web/html.js";
import { layout, type PageContext, time, unitHref } from "../web/pages.js";
import type { BundleSummary } from "./rows.js";

/** A bundle's rollout counts by state (the bundles page and the overview). */
export function rolloutCounts(b: BundleSummary): Html {
  return html`<span class="pending">${b.counts.pending} pending</span>, <span class="applied">${b.counts.applied} applied</span>,
<span class="rolledBack">${b.counts.rolledBack} rolled back</span>`;
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
uploaded by ${b.uploadedBy} at ${time(b.uploadedAt, pc.timeZone)}${b.expiresAt === null ? "" : html`; expires ${expiryText(b.expiresAt)}`}.</p>
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
