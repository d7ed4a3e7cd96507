/**
 * The monthly invoice run: for a finished month, each company's invoice is built from the fleet's sales,
 * numbered, stored as a draft, sent once (InvoiceDirect or InvoiceLink), followed (status check of open
 * invoices, as a fallback for late callbacks) and marked overdue after its due date. Running it again, or
 * twice at once, sends nothing new: one invoice per (company, month) by constraint, and a draft is sent
 * only by the run that claimed it.
 */
import type { Selectable } from "kysely";
import { DAY_MS } from "../../core/days.js";
import type { InvoiceInput, InvoicesClient } from "../../payment/invoices/client.js";
import { InvoiceApiError } from "../../payment/invoices/client.js";
import { dayOf, type FleetContext } from "../context.js";
import {
  buildInvoice,
  InvoiceBuildError,
  memberLines,
  type ProductForBilling,
  subsidisedLines,
} from "./build.js";
import type { CompaniesTable, InvoiceArticlesTable, InvoicesTable } from "./schema.js";
import {
  catalogueProducts,
  claimDraft,
  companiesInOrder,
  companyMemberIds,
  companyUnitIds,
  countByStatus,
  draftInvoices,
  invoiceArticles,
  markOverdueBefore,
  markSendFailed,
  markSent,
  monthSales,
  openInvoices,
} from "./store/cycle.js";
import {
  applyRemoteStatus,
  hasInvoice,
  type InvoicesDb,
  insertDraft,
  invoiceOfMonth,
  invoicesDb,
} from "./store/invoices.js";

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
/** A claimed draft whose run died is claimable again after this long. */
const CLAIM_TTL_MS = 10 * 60_000;

/** First and last day (`YYYY-MM-DD`) of a month `YYYY-MM`. */
export function monthDays(month: string): { first: string; last: string } {
  const m = MONTH.exec(month);
  if (m === null) throw new RangeError(`month must be YYYY-MM, not ${JSON.stringify(month.slice(0, 20))}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const lastDay = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return { first: `${month}-01`, last: `${month}-${String(lastDay).padStart(2, "0")}` };
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

export interface CycleReport {
  month: string;
  /** Invoices created by this run: company id and number. */
  created: { companyId: string; number: number; total: number }[];
  /** Companies with nothing to bill for the month. */
  empty: string[];
  /** Companies whose invoice could not be built (e.g. an item missing from the catalogue). */
  buildErrors: { companyId: string; reason: string }[];
  /** Invoices sent by this run. */
  sent: { invoiceId: string; number: number; remoteId: string }[];
  /** Send attempts that failed (retried by the next run unless the service refused the invoice). */
  sendErrors: { invoiceId: string; reason: string }[];
  /** Invoices whose status changed by a status check. */
  followed: number;
  /** Invoices marked overdue by this run. */
  overdue: number;
  /** Every invoice of the month by status, after the run. */
  byStatus: Record<string, number>;
}

/**
 * Runs the month `YYYY-MM` (a finished month in the fleet's time zone) at time `now`; with
 * `opts.companyId` ("run now" for one company) only that company's invoice is built and sent (no follow-up
 * of open invoices, no overdue marking: the monthly run's).
 * Throws RangeError for a month that has not ended yet.
 */
export async function runInvoiceCycle(
  ctx: FleetContext,
  client: InvoicesClient,
  month: string,
  now: number,
  opts: { companyId?: string } = {},
): Promise<CycleReport> {
  const { last } = monthDays(month);
  const today = dayOf(now, ctx.timeZone);
  if (today <= last) throw new RangeError(`month ${month} has not ended (today is ${today})`);
  const db = invoicesDb(ctx);
  const report: CycleReport = {
    month,
    created: [],
    empty: [],
    buildErrors: [],
    sent: [],
    sendErrors: [],
    followed: 0,
    overdue: 0,
    byStatus: {},
  };

  const companies = await buildInvoices(ctx, db, month, today, report, opts.companyId);
  await sendDrafts(ctx, db, client, companies, now, report, opts.companyId);
  // Following open invoices and marking overdue ones are the monthly run's; a run for one company skips them.
  if (opts.companyId === undefined) {
    await followOpen(ctx, db, client, now, report);
    await markOverdue(db, month, today, now, report);
  }
  return report;
}

type CompanyRow = Selectable<CompaniesTable>;

/** Step 1: builds and numbers each company's invoice of `month` (once per company and month). */
async function buildInvoices(
  ctx: FleetContext,
  db: InvoicesDb,
  month: string,
  today: string,
  report: CycleReport,
  companyId: string | undefined,
): Promise<CompanyRow[]> {
  // 1. Build and number each company's invoice (once per company and month).
  const companies = (await companiesInOrder(db)).filter((c) => companyId === undefined || c.id === companyId);
  for (const c of companies) {
    if (await hasInvoice(db, c.id, month)) continue;
    const bill = await billOf(ctx, db, c, month);
    if (bill.kind === "empty") {
      report.empty.push(c.id);
      continue;
    }
    if (bill.kind === "error") {
      report.buildErrors.push({ companyId: c.id, reason: bill.reason });
      continue;
    }
    const made = await insertDraft(ctx, {
      companyId: c.id,
      month,
      issuerId: c.issuer_id,
      delivery: c.delivery,
      currency: currencyOf(c),
      issueDate: today,
      dueDate: addDays(today, c.due_days),
      built: bill.built,
    });
    if (made !== null) report.created.push({ companyId: c.id, number: made.number, total: bill.built.total });
  }
  return companies;
}

const currencyOf = (c: CompanyRow): "DKK" | "EUR" => (c.country === "DK" ? "DKK" : "EUR");

/** What a company's invoice of `month` would hold: nothing to bill, a build error, or the built invoice. */
export type Bill =
  | { kind: "empty" }
  | { kind: "error"; reason: string }
  | { kind: "built"; built: ReturnType<typeof buildInvoice> };

/** Builds company `c`'s invoice of `month` from the fleet's sales, without storing anything. */
async function billOf(ctx: FleetContext, db: InvoicesDb, c: CompanyRow, month: string): Promise<Bill> {
  const { first, last } = monthDays(month);
  const units = await companyUnitIds(db, c.id);
  // Company-paid plan members: their plan vends, at any unit, are billed to the company.
  const members = await companyMemberIds(ctx, c.id);
  if (units.length === 0 && members.length === 0) return { kind: "empty" };
  const unitIds = units.map((u) => u.unit_id);
  const memberIds = members.map((m) => m.id);
  // One read of the month: vends at the company's units and its members' plan vends; the two line
  // builders below each take their own.
  const sales = await monthSales(db, first, last, unitIds, memberIds);
  const products = await catalogueProducts(db, c.catalogue);
  const catalogue = new Map<number, ProductForBilling>(products.map((p) => [p.item, p]));
  let built: ReturnType<typeof buildInvoice>;
  try {
    built = buildInvoice([
      ...subsidisedLines(sales, new Set(unitIds), catalogue),
      ...memberLines(sales, new Set(memberIds), catalogue),
    ]);
  } catch (e: unknown) {
    if (!(e instanceof InvoiceBuildError)) throw e;
    return { kind: "error", reason: e.message };
  }
  return built.total <= 0 ? { kind: "empty" } : { kind: "built", built };
}

/** A company's invoice of a month as the run would make it now (issue 43: the preview before "run now"). */
export interface InvoicePreview {
  companyId: string;
  companyName: string;
  month: string;
  currency: "DKK" | "EUR";
  issueDate: string;
  dueDate: string;
  /** The company's invoice of the month when one exists already (the run makes no second one). */
  existing: { id: string; number: number; status: string } | null;
  bill: Bill;
}

/**
 * The preview of company `companyId`'s invoice of `month` at `now`: nothing is stored or sent. Undefined
 * for an unknown company; RangeError for a month that has not ended.
 */
export async function previewInvoice(
  ctx: FleetContext,
  companyId: string,
  month: string,
  now: number,
): Promise<InvoicePreview | undefined> {
  const { last } = monthDays(month);
  const today = dayOf(now, ctx.timeZone);
  if (today <= last) throw new RangeError(`month ${month} has not ended (today is ${today})`);
  const db = invoicesDb(ctx);
  const c = (await companiesInOrder(db)).find((x) => x.id === companyId);
  if (c === undefined) return undefined;
  const existing = await invoiceOfMonth(db, c.id, month);
  return {
    companyId: c.id,
    companyName: c.name,
    month,
    currency: currencyOf(c),
    issueDate: today,
    dueDate: addDays(today, c.due_days),
    existing: existing ?? null,
    bill: await billOf(ctx, db, c, month),
  };
}

/** Step 2: sends every draft (this month's and any earlier one whose sending failed), each by one run only. */
async function sendDrafts(
  ctx: FleetContext,
  db: InvoicesDb,
  client: InvoicesClient,
  companies: readonly CompanyRow[],
  now: number,
  report: CycleReport,
  companyId: string | undefined,
): Promise<void> {
  // 2. Send every draft (this month's and any earlier one whose sending failed), each by one run only;
  // a run for one company (run now) sends only that company's.
  const drafts = await draftInvoices(db);
  for (const inv of drafts) {
    if (companyId !== undefined && inv.company_id !== companyId) continue;
    if (!(await claimDraft(db, inv.id, now, CLAIM_TTL_MS))) continue;
    const company = companies.find((c) => c.id === inv.company_id);
    const articles = await invoiceArticles(db, inv.id);
    const input = invoiceInput(inv, company, articles);
    try {
      const r =
        inv.delivery === "direct"
          ? { ...(await client.sendDirect(input)), link: null }
          : await client.sendLink(input);
      await markSent(db, inv.id, r, now);
      report.sent.push({ invoiceId: inv.id, number: inv.number, remoteId: r.invoiceId });
      ctx.logger.info({ invoice: inv.id, number: inv.number, month: inv.month }, "invoice sent");
    } catch (e: unknown) {
      if (!(e instanceof InvoiceApiError)) throw e;
      // A duplicate number means an earlier attempt reached the service but its answer was lost: the
      // service has the invoice (sent), its id is learnt from its first callback (callbacks.ts). Any other
      // refusal (4xx) will not pass on a repeat: unpaid with the reason, for a person to look at. No answer
      // or 5xx: the claim is released and the next run tries again with the same number.
      const refused = e.status >= 400 && e.status < 500;
      await markSendFailed(
        db,
        inv.id,
        e.duplicate ? "duplicate" : refused ? "refused" : "retry",
        e.duplicate
          ? "sent; the service's answer was lost and its invoice id is learnt from the next callback"
          : e.message,
        now,
      );
      report.sendErrors.push({ invoiceId: inv.id, reason: e.message });
      ctx.logger.warn({ invoice: inv.id, status: e.status, code: e.code }, "invoice not sent");
    }
  }
}

/** What the service is sent for invoice `inv` of `company`, with its articles. */
function invoiceInput(
  inv: Selectable<InvoicesTable>,
  company: CompanyRow | undefined,
  articles: readonly Selectable<InvoiceArticlesTable>[],
): InvoiceInput {
  const { first: orderDate, last: deliveryDate } = monthDays(inv.month);
  return {
    issuerId: inv.issuer_id,
    phone: company?.phone ?? null,
    ...(company === undefined ? {} : { consumerName: company.name }),
    total: inv.total,
    vatTotal: inv.vat_total,
    country: company?.country ?? "DK",
    invoiceNumber: String(inv.number),
    issueDate: inv.issue_date,
    orderDate,
    deliveryDate,
    dueDate: inv.due_date,
    comment: `Vending ${inv.month}`,
    articles: articles.map((a) => ({
      articleNumber: a.article_number,
      description: a.description,
      vatBp: a.vat_bp,
      vat: a.vat,
      gross: a.gross,
      unit: a.unit,
      quantity: a.quantity,
      unitPrice: a.unit_price,
    })),
  };
}

/** Step 3: follows open invoices (callbacks may be late, seed §Events): a status check each. */
async function followOpen(
  ctx: FleetContext,
  db: InvoicesDb,
  client: InvoicesClient,
  now: number,
  report: CycleReport,
): Promise<void> {
  // 3. Follow open invoices (callbacks may be late, seed §Events): a status check each.
  const open = await openInvoices(db);
  for (const inv of open) {
    if (inv.remote_id === null) continue;
    try {
      const status = await client.status(inv.remote_id);
      const after = await applyRemoteStatus(db, now, { remoteId: inv.remote_id, status, sequence: null });
      if (after !== null && after !== inv.status) report.followed += 1;
    } catch (e: unknown) {
      if (!(e instanceof InvoiceApiError)) throw e;
      ctx.logger.warn({ invoice: inv.id, status: e.status, code: e.code }, "invoice status check failed");
    }
  }
}

/** Step 4: marks overdue what is open after its due date, and counts the month's invoices by status. */
async function markOverdue(
  db: InvoicesDb,
  month: string,
  today: string,
  now: number,
  report: CycleReport,
): Promise<void> {
  // 4. Overdue: open after the due date.
  report.overdue = await markOverdueBefore(db, today, now);

  const counts = await countByStatus(db, month);
  for (const r of counts) report.byStatus[r.status] = Number(r.n);
}
