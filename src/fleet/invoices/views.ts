/**
 * Page bodies for the dashboard (routes.ts mounts them in its layout): companies, the invoice list with
 * paid/unpaid/overdue, and one invoice with its articles. Pure renderers over the rows
 * store/invoices.ts loads, escaping every value through html.ts.
 */

import { formatAmount } from "../../core/money.js";
import { type Html, html } from "../web/html.js";
import type { CompanyRow, InvoiceArticlesTable, InvoiceRow, InvoicesTable } from "./schema.js";

/** A VAT rate in basis points as a percentage: `25 %`, `12.50 %`. */
export const rate = (bp: number): string => `${(bp / 100).toFixed(bp % 100 === 0 ? 0 : 2)} %`;

export function renderCompanies(companies: readonly CompanyRow[]): Html {
  return html`<section class="companies">
<h1>Companies</h1>
${
  companies.length === 0
    ? html`<p>No companies yet.</p>`
    : html`<table>
<thead><tr><th>Name</th><th>Org. number</th><th>Delivery</th><th>Issuer</th><th>Due (days)</th><th>Catalogue</th><th>Units paid for</th></tr></thead>
<tbody>
${companies.map(
  (c) => html`<tr><td>${c.name}</td><td>${c.org_number}</td><td>${
    c.delivery === "direct" ? html`InvoiceDirect to ${c.phone}` : "InvoiceLink"
  }</td><td><code>${c.issuer_id}</code></td><td>${c.due_days}</td><td>${c.catalogue}</td><td>${
    c.units.length === 0
      ? "none"
      : c.units.map(
          (u, i) => html`${i === 0 ? "" : ", "}<a href="${`/units/${encodeURIComponent(u)}`}">${u}</a>`,
        )
  }</td></tr>
`,
)}</tbody>
</table>`
}
</section>`;
}

export function renderInvoices(invoices: readonly InvoiceRow[]): Html {
  const count = (s: InvoicesTable["status"]) => invoices.filter((i) => i.status === s).length;
  return html`<section class="invoices">
<h1>Invoices</h1>
<p class="summary">paid ${count("paid")} · unpaid ${count("unpaid")} · overdue ${count("overdue")} · sent ${count("sent")} · draft ${count("draft")} · cancelled ${count("cancelled")}</p>
${
  invoices.length === 0
    ? html`<p>No invoices yet.</p>`
    : html`<table>
<thead><tr><th>Number</th><th>Company</th><th>Month</th><th>Total</th><th>VAT</th><th>Issued</th><th>Due</th><th>Status</th></tr></thead>
<tbody>
${invoices.map(
  (
    i,
  ) => html`<tr class="status-${i.status}"><td><a href="invoices/${i.id}">${i.number}</a></td><td>${i.company_name}</td><td>${i.month}</td><td>${formatAmount(i.total)} ${i.currency}</td><td>${formatAmount(i.vat_total)}</td><td>${i.issue_date}</td><td>${i.due_date}</td><td>${i.status}${
    i.note === null ? "" : html` <small>${i.note}</small>`
  }</td></tr>
`,
)}</tbody>
</table>`
}
</section>`;
}

export function renderInvoice(invoice: InvoiceRow, articles: readonly InvoiceArticlesTable[]): Html {
  return html`<section class="invoice">
<h1>Invoice ${invoice.number} · ${invoice.company_name} · ${invoice.month}</h1>
<p>Status <strong>${invoice.status}</strong>${
    invoice.remote_status === null ? "" : html` (service: ${invoice.remote_status})`
  } · issued ${invoice.issue_date} · due ${invoice.due_date}${
    invoice.payment_date === null ? "" : html` · payment date ${invoice.payment_date}`
  }${invoice.link === null ? "" : html` · <a href="${invoice.link}">payment link</a>`}</p>
<table>
<thead><tr><th>Article</th><th>Description</th><th>Quantity</th><th>Unit price incl. VAT</th><th>VAT rate</th><th>Net</th><th>VAT</th><th>Total incl. VAT</th></tr></thead>
<tbody>
${articles.map(
  (
    a,
  ) => html`<tr><td>${a.article_number}</td><td>${a.description}</td><td>${a.quantity} ${a.unit}</td><td>${formatAmount(a.unit_price)}</td><td>${rate(a.vat_bp)}</td><td>${formatAmount(a.net)}</td><td>${formatAmount(a.vat)}</td><td>${formatAmount(a.gross)}</td></tr>
`,
)}</tbody>
<tfoot><tr><th colspan="5">Total ${invoice.currency}</th><th>${formatAmount(invoice.total - invoice.vat_total)}</th><th>${formatAmount(invoice.vat_total)}</th><th>${formatAmount(invoice.total)}</th></tr></tfoot>
</table>
</section>`;
}
