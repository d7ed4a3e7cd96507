/**
 * The "run now" of company invoices on the dashboard (issue 43), HTML only: the form that picks a company and
 * a finished month, and the preview of that invoice (its articles and totals as the run would make them,
 * nothing stored) with the button that makes and sends it. Every value escaped by web/html.ts.
 */
import { formatAmount } from "../../core/money.js";
import { type Html, html } from "../web/html.js";
import type { InvoicePreview } from "./cycle.js";
import type { CompanyRow } from "./schema.js";
import { rate } from "./views.js";

/** The company and month picker (a GET: the preview changes nothing). */
export function runNowForm(companies: readonly CompanyRow[], month: string): Html {
  if (companies.length === 0) return html``;
  return html`<section class="invoice-run"><h2>Run now</h2>
<p class="muted">Make and send one company's invoice of a finished month now, instead of waiting for the monthly run. You see a preview first.</p>
<form method="get" action="/invoices/run">
<label>Company <select name="company">${companies.map((c) => html`<option value="${c.id}">${c.name}</option>`)}</select></label>
<label>Month <input name="month" value="${month}" pattern="\\d{4}-\\d{2}" placeholder="YYYY-MM" required></label>
<button type="submit">Preview</button></form></section>`;
}

/** The preview, and (when there is something to send and no invoice yet) the form that runs it. */
export function previewPage(p: InvoicePreview, csrf: string): Html {
  const head = html`<h1>Invoice preview · ${p.companyName} · ${p.month}</h1>`;
  if (p.existing !== null)
    return html`${head}<p>This company's invoice of ${p.month} exists already: <a href="${`/invoices/${encodeURIComponent(p.existing.id)}`}">invoice ${p.existing.number}</a> (${p.existing.status}). A run makes no second one.</p>`;
  if (p.bill.kind === "empty")
    return html`${head}<p>Nothing to bill: no vends at the company's units and no plan vends of its members in ${p.month}, or no units and members at all.</p>`;
  if (p.bill.kind === "error")
    return html`${head}<p class="error" role="alert">The invoice cannot be made: ${p.bill.reason}. Fix the company's catalogue on the Companies page, then preview again.</p>`;
  const b = p.bill.built;
  return html`${head}
<p>Issued ${p.issueDate} · due ${p.dueDate} · ${p.currency}. Nothing is stored or sent until you press the button.</p>
<table class="preview">
<thead><tr><th>Article</th><th>Description</th><th>Quantity</th><th>Unit price incl. VAT</th><th>VAT rate</th><th>Net</th><th>VAT</th><th>Total incl. VAT</th></tr></thead>
<tbody>${b.articles.map(
    (a) =>
      html`<tr><td>${a.articleNumber}</td><td>${a.description}</td><td>${a.quantity} ${a.unit}</td><td>${formatAmount(a.unitPrice)}</td><td>${rate(a.vatBp)}</td><td>${formatAmount(a.net)}</td><td>${formatAmount(a.vat)}</td><td>${formatAmount(a.gross)}</td></tr>`,
  )}</tbody>
<tfoot><tr><th colspan="5">Total ${p.currency}</th><th>${formatAmount(b.netTotal)}</th><th>${formatAmount(b.vatTotal)}</th><th>${formatAmount(b.total)}</th></tr></tfoot>
</table>
<form method="post" action="/invoices/run">
<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="company" value="${p.companyId}"><input type="hidden" name="month" value="${p.month}">
<button type="submit">Make and send this invoice now</button></form>`;
}
