/**
 * The dashboard shell's pages and page helpers (the layout with its nav, login, messages, money, times),
 * server-rendered with the escaping `html` template: every value from a unit, a
 * report or a manager is interpolated, never concatenated. Chart data travels in a
 * `<script type="application/json">` block (never executed; `<` escaped) that /static/app.js reads.
 */
import { zonedTime } from "../../core/days.js";
import { formatMoney } from "../../core/money.js";
import type { Session } from "./accounts.js";
import { type Html, html, raw } from "./html.js";

export interface PageContext {
  session: Session;
  timeZone: string;
  now: number;
  /** Nav entries after the built-in ones (the pages other modules mount in the dashboard). */
  extraNav?: readonly (readonly [string, string])[];
  /** Where managers upload bundles from the browser, if the server offers it. */
  bundleUploadHref?: string;
  /** Shown at the top of every page while they hold (a callback address a payment service refused). */
  notices?: readonly string[];
}

/** Minor units as a decimal string with the currency's digits; negative nets keep their sign. */
export function money(minor: number | bigint, currency: string): string {
  return formatMoney(minor, currency);
}

/** A time on the dashboard, in the fleet's zone and naming it: `2026-12-02 14:05:03 UTC+1`. */
export function time(ms: number | null, timeZone: string): string {
  if (ms === null) return "never";
  return zonedTime(ms, timeZone, true);
}

/** How long ago `ms` was, from `now`, in words ("12 s ago", "3 days ago"); "" for never. */
export function ago(ms: number | null, now: number): string {
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
</header><main>${(pc.notices ?? []).map((n) => html`<p class="notice error" role="alert">${n}</p>`)}${ownHeading ? "" : html`<h1>${title}</h1>`}
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
