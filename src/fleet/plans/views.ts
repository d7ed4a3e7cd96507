/**
 * Page bodies of the plans (issue 18), built with web/html.ts so every value is escaped: plans, members,
 * usage, and the public sign-up page with its QR code, over the rows store/plans.ts reads. The dashboard's layout
 * and login wrap the first three (routes.ts); the sign-up pages are public and come with a small document of
 * their own.
 */

import { formatAmount } from "../../core/money.js";
import { type Html, html, raw } from "../web/html.js";
import { qrSvg } from "./qr.js";
import type { MemberDetail, MemberRow, UsageRow } from "./rows.js";
import type { PlansTable } from "./schema.js";

function limit(items: number | null, amount: number | null): string {
  const parts: string[] = [];
  if (items !== null) parts.push(`${items} items`);
  if (amount !== null) parts.push(formatAmount(amount));
  return parts.length === 0 ? "no limit" : parts.join(" / ");
}

/** The plans; `editable` (a manager) adds each plan's edit link. */
export function plansPage(plans: readonly PlansTable[], signUpBase: string, editable = false): Html {
  return html`<h1>Plans</h1>
${plans.length === 0 ? html`<p class="muted">No plans yet.</p>` : ""}
<table class="plans"><thead><tr><th>Name</th><th>Monthly fee</th><th>Per day</th><th>Per month</th><th>Valid at</th><th>Sign-up link</th>${editable ? html`<th></th>` : ""}</tr></thead>
<tbody>${plans.map(
    (
      p,
    ) => html`<tr><td>${p.name}</td><td>${formatAmount(p.price)} ${p.currency}</td><td>${limit(p.day_items, p.day_amount)}</td>
<td>${limit(p.month_items, p.month_amount)}</td><td>${(JSON.parse(p.units) as string[]).join(", ")}</td>
<td><a href="${`${signUpBase}/plans/signup/${encodeURIComponent(p.id)}`}">sign up</a></td>${
      editable ? html`<td><a href="${`/plans/${encodeURIComponent(p.id)}/edit`}">Edit</a></td>` : ""
    }</tr>`,
  )}</tbody></table>`;
}

function when(ms: number | null): string {
  return ms === null ? "" : new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

/** A member's name, linked to the member's page (refunds, end of membership). */
export function memberLink(id: string, name: string): Html {
  return html`<a href="${`/plans/members/${encodeURIComponent(id)}`}">${name}</a>`;
}

export function membersPage(members: readonly MemberRow[]): Html {
  return html`<h1>Members</h1>
<table class="members"><thead><tr><th>Name</th><th>Plan</th><th>Status</th><th>Agreement</th><th>Since</th><th>Grace until</th><th>Company</th><th>Note</th></tr></thead>
<tbody>${members.map(
    (
      m,
    ) => html`<tr class="${`status-${m.status}`}"><td>${memberLink(m.id, m.name)}</td><td>${m.plan_name}</td><td>${m.status}</td><td>${m.agreement_status ?? ""}</td>
<td>${when(m.activated_at)}</td><td>${when(m.grace_until)}</td><td>${m.company_id ?? ""}</td><td>${m.reason}</td></tr>`,
  )}</tbody></table>`;
}

export function usagePage(period: string, rows: readonly UsageRow[]): Html {
  return html`<h1>Plan usage ${period}</h1>
<table class="usage"><thead><tr><th>Member</th><th>Plan</th><th>Within allowance</th><th>Amount</th><th>Over allowance</th><th>Overage</th></tr></thead>
<tbody>${rows.map(
    (r) =>
      html`<tr><td>${memberLink(r.memberId, r.name)}</td><td>${r.plan}</td><td>${r.items}</td><td>${formatAmount(r.amount)}</td><td>${r.overItems}</td><td>${formatAmount(r.overAmount)}</td></tr>`,
  )}</tbody></table>`;
}

/** A small standalone document for the public sign-up pages. */
export function publicDocument(title: string, body: Html): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head><body>${body}</body></html>`.value;
}

export function signUpPage(
  plan: Pick<PlansTable, "id" | "name" | "price" | "currency">,
  csrf: string,
  error?: string,
): Html {
  return html`<h1>Sign up: ${plan.name}</h1>
<p>${formatAmount(plan.price)} ${plan.currency} a month, paid through the app.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="${`/plans/signup/${encodeURIComponent(plan.id)}`}" autocomplete="off">
<input type="hidden" name="csrf" value="${csrf}">
<label>Name <input name="name" required maxlength="60"></label>
<label>Mobile number (with country code) <input name="phone" inputmode="tel" maxlength="16"></label>
<label>Card number (UID) of your badge <input name="badge" required maxlength="40" autocomplete="off"></label>
<button type="submit">Sign up</button>
</form>`;
}

/** After sign-up: the agreement's landing link as a QR code (SVG rendered here) and as a link. */
export function signUpDonePage(planName: string, landingUrl: string): Html {
  return html`<h1>Almost done: ${planName}</h1>
<p>Scan the code with your phone, or open the link, and accept the agreement in the app.</p>
<div class="qr">${raw(qrSvg(landingUrl))}</div>
<p><a href="${landingUrl}">Open the agreement in the app</a></p>`;
}

function refundForm(memberId: string, paymentId: string, csrf: string): Html {
  return html`<form method="post" action="${`/plans/admin/members/${encodeURIComponent(memberId)}/refunds`}" class="inline">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="payment" value="${paymentId}">
<input name="amount" placeholder="full" inputmode="decimal" size="7"><button type="submit">Refund</button></form>`;
}

/** A member's charges, overages and refunds, with refund and end-membership forms (`csrf`: the dashboard's token). */
export function memberPage(d: MemberDetail, csrf: string): Html {
  const m = d.member;
  return html`<h1>${m.name}</h1>
<p>${m.plan_name} · ${m.status}${m.reason ? html` (${m.reason})` : ""} · agreement ${m.agreement_status ?? "none"}</p>
${
  m.status === "ended"
    ? ""
    : html`<form method="post" action="${`/plans/admin/members/${encodeURIComponent(m.id)}/end`}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">End membership</button></form>`
}
<h2>Monthly fees</h2>
<table class="charges"><thead><tr><th>Period</th><th>Due</th><th>Amount</th><th>State</th><th></th></tr></thead><tbody>
${d.charges.map(
  (
    c,
  ) => html`<tr><td>${c.period}</td><td>${c.due_date}</td><td>${formatAmount(c.amount)}</td><td>${c.state}</td>
<td>${c.state === "executed" && c.payment_id ? refundForm(m.id, c.payment_id, csrf) : ""}</td></tr>`,
)}</tbody></table>
<h2>Overage</h2>
<table class="overages"><thead><tr><th>Period</th><th>Items</th><th>Amount</th><th>State</th><th></th></tr></thead><tbody>
${d.overages.map(
  (o) => html`<tr><td>${o.period}</td><td>${o.items}</td><td>${formatAmount(o.amount)}</td><td>${o.state}</td>
<td>${o.state === "captured" && o.oneoff_id ? refundForm(m.id, o.oneoff_id, csrf) : ""}</td></tr>`,
)}</tbody></table>
<h2>Refunds</h2>
<table class="refunds"><thead><tr><th>Payment</th><th>Amount</th><th>State</th><th>Note</th></tr></thead><tbody>
${d.refunds.map(
  (r) =>
    html`<tr><td>${r.payment_id}</td><td>${r.amount === null ? "full" : formatAmount(r.amount)}</td><td>${r.state}</td><td>${r.status_text}</td></tr>`,
)}</tbody></table>`;
}
