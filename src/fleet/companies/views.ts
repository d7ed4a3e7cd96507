/**
 * The Companies page's forms (issue 18), HTML only: a new company, and per company its units, catalogue and
 * members, each value escaped through web/html.ts, over the rows store.ts loads (routes.ts mounts them).
 */
import { formatAmount } from "../../core/money.js";
import { type CompanyRow, rate } from "../invoices/index.js";
import { type Html, html } from "../web/html.js";
import type { CompanyFormData } from "./rows.js";

function createForm(csrf: string): Html {
  return html`<section class="company-new"><h2>New company</h2>
<form method="post" action="/companies">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Name <input name="name" required maxlength="200"></label>
<label>Org. number <input name="orgNumber" required maxlength="40"></label>
<label>Delivery <select name="delivery"><option value="link">InvoiceLink</option><option value="direct">InvoiceDirect</option></select></label>
<label>Phone (InvoiceDirect) <input name="phone" placeholder="+4512345678"></label>
<label>Issuer id <input name="issuerId" required placeholder="the issuer's guid"></label>
<label>Country <select name="country"><option>DK</option><option>FI</option></select></label>
<label>Due (days) <input name="dueDays" value="14" inputmode="numeric"></label>
<label>Catalogue <input name="catalogue" value="fleet" maxlength="100"></label>
<button type="submit">Create company</button></form></section>`;
}

function companyForms(c: CompanyRow, d: CompanyFormData, csrf: string): Html {
  const base = `/companies/${encodeURIComponent(c.id)}`;
  const products = d.products.filter((p) => p.catalogue === c.catalogue);
  const members = d.members.filter((m) => m.company_id === c.id);
  const plans = d.plans;
  return html`<section class="company" id="${`company-${c.id}`}"><h2>${c.name}</h2>
<p>Units paid for: ${c.units.length === 0 ? "none" : c.units.join(", ")}</p>
<form method="post" action="${`${base}/units`}">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Unit <select name="unit">${d.units.map(
    (u) =>
      html`<option value="${u.id}">${u.id}${u.label === "" ? "" : ` (${u.label})`}${u.status === "approved" ? "" : ` — ${u.status}`}</option>`,
  )}</select></label>
<button type="submit">Assign unit</button></form>
<h3>Catalogue ${c.catalogue}</h3>
${
  products.length === 0
    ? html`<p>No products yet.</p>`
    : html`<table class="products"><thead><tr><th>Item</th><th>Name</th><th>VAT</th><th>Price incl. VAT</th></tr></thead>
<tbody>${products.map((p) => html`<tr><td>${p.item}</td><td>${p.name}</td><td>${rate(p.vat_bp)}</td><td>${formatAmount(p.price)}</td></tr>`)}</tbody></table>`
}
<form method="post" action="${`${base}/products`}">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Item <input name="item" required inputmode="numeric"></label>
<label>Name <input name="name" required maxlength="200"></label>
<label>VAT % <input name="vat" required value="25"></label>
<label>Price incl. VAT <input name="price" required placeholder="12.50"></label>
<button type="submit">Set product</button></form>
${
  plans === null
    ? ""
    : html`<h3>Company-paid members</h3>
${
  members.length === 0
    ? html`<p>No members yet.</p>`
    : html`<table class="company-members"><thead><tr><th>Name</th><th>Plan</th><th>Status</th></tr></thead>
<tbody>${members.map((m) => html`<tr><td><a href="${`/plans/members/${encodeURIComponent(m.id)}`}">${m.name}</a></td><td>${m.plan}</td><td>${m.status}</td></tr>`)}</tbody></table>`
}
<form method="post" action="${`${base}/members`}">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Plan <select name="plan">${plans.map((p) => html`<option value="${p.id}">${p.name}</option>`)}</select></label>
<label>Name <input name="name" required maxlength="60"></label>
<label>Card UID <input name="badgeUid" required autocomplete="off"></label>
<button type="submit">Add member</button></form>`
}
</section>`;
}

/** The managers' part of `/companies`: an error (if any), the new-company form, then each company's forms. */
export function renderCompanyForms(
  companies: readonly CompanyRow[],
  d: CompanyFormData,
  csrf: string,
  error: string | null = null,
): Html {
  return html`<section class="company-forms">
${error === null ? "" : html`<p class="error" role="alert">${error}</p>`}
${createForm(csrf)}
${companies.map((c) => companyForms(c, d, csrf))}
</section>`;
}
