/**
 * Tables of companies and their invoices (issue 18), created by migration `0003_invoices`
 * (./migration.ts). Same conventions as src/fleet/db/schema.ts: times in epoch ms, money in integer minor
 * units, booleans 0/1, days `YYYY-MM-DD` in the fleet's reporting time zone.
 */
import type { FleetDatabase } from "../db/schema.js";

export interface CompaniesTable {
  id: string;
  name: string;
  /** Organisation (CVR / Y-tunnus) number, as the company gives it. */
  org_number: string;
  /** `direct`: InvoiceDirect to `phone` (an app user); `link`: InvoiceLink (`phone` prefills it, optional). */
  delivery: "direct" | "link";
  phone: string | null;
  /** The invoice issuer (department) id at the service. */
  issuer_id: string;
  /** `DK` (DKK) or `FI` (EUR), seed §Invoice create input. */
  country: "DK" | "FI";
  /** Days from issue to due date. */
  due_days: number;
  /** Product catalogue used to price its vends (`products.catalogue`). */
  catalogue: string;
  created_at: number;
}

/** Subsidised vending: every vend at these units is billed to the company. A unit has at most one payer. */
export interface CompanyUnitsTable {
  unit_id: string;
  company_id: string;
}

/** The product catalogue: item → name, VAT rate, price including VAT; one catalogue per fleet or unit group. */
export interface ProductsTable {
  catalogue: string;
  item: number;
  name: string;
  /** VAT rate in basis points: 2500 = 25 %. */
  vat_bp: number;
  /** Price per unit including VAT, minor units. */
  price: number;
}

/** Next invoice number per issuer: incremented in the transaction that inserts the invoice (gap-free). */
export interface InvoiceNumbersTable {
  issuer_id: string;
  last_number: number;
}

export type InvoiceStatus = "draft" | "sent" | "paid" | "unpaid" | "overdue" | "cancelled";

export interface InvoicesTable {
  id: string;
  company_id: string;
  /** `YYYY-MM`: the month billed. One invoice per company and month. */
  month: string;
  issuer_id: string;
  /** Sequential per issuer, from 1, without gaps. */
  number: number;
  status: InvoiceStatus;
  /** The service's last status (`Created`, `Accepted`, `Paid`, …), null before it is sent. */
  remote_status: string | null;
  /** The service's InvoiceId, null until the create call answered. */
  remote_id: string | null;
  /** The InvoiceLink's `user-redirect` link. */
  link: string | null;
  delivery: "direct" | "link";
  currency: string;
  total: number;
  vat_total: number;
  issue_date: string;
  due_date: string;
  /** Highest callback Sequence applied (-1 before any). */
  last_sequence: number;
  /** A run that claimed the draft for sending, and when (two runs at once send it once). */
  send_claimed_at: number | null;
  sent_at: number | null;
  paid_at: number | null;
  payment_date: string | null;
  /** Why sending failed, or a note about the last status change. */
  note: string | null;
  created_at: number;
  updated_at: number;
}

export interface InvoiceArticlesTable {
  invoice_id: string;
  line: number;
  article_number: string;
  description: string;
  unit: string;
  quantity: number;
  unit_price: number;
  vat_bp: number;
  net: number;
  vat: number;
  gross: number;
}

/** Callback elements applied, keyed by (remote invoice id, sequence, status): a replay changes nothing. */
export interface InvoiceCallbacksTable {
  remote_id: string;
  sequence: number;
  status: string;
  received_at: number;
}

export interface InvoicesDatabase extends FleetDatabase {
  companies: CompaniesTable;
  company_units: CompanyUnitsTable;
  products: ProductsTable;
  invoice_numbers: InvoiceNumbersTable;
  invoices: InvoicesTable;
  invoice_articles: InvoiceArticlesTable;
  invoice_callbacks: InvoiceCallbacksTable;
}

/** A company with its units, as the pages show it. */
export interface CompanyRow extends CompaniesTable {
  units: string[];
}

/** An invoice with its company's name, as the pages show it. */
export interface InvoiceRow extends InvoicesTable {
  company_name: string;
}
