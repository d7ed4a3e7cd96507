/**
 * Companies, the product catalogue and invoices in the fleet database: validated writes (zod at the
 * boundary), the gap-free invoice number, and the one place where a service status becomes an invoice
 * status (callbacks and the monthly run's status check both go through {@link applyRemoteStatus}).
 */
import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { z } from "zod";
import type { FleetContext } from "../../context.js";
import type { ArticleLine, BuiltInvoice } from "../build.js";
import { FINAL, localStatus } from "../rules.js";
import type {
  CompanyRow,
  InvoiceArticlesTable,
  InvoiceRow,
  InvoiceStatus,
  InvoicesDatabase,
  InvoicesTable,
} from "../schema.js";

export type InvoicesDb = Kysely<InvoicesDatabase>;

/** The fleet database with the invoice tables (migration 0003_invoices is part of every fleet database). */
export function invoicesDb(ctx: FleetContext): InvoicesDb {
  // The tables exist in every fleet database (migration 0003_invoices); only the static type widens here.
  return ctx.db as unknown as InvoicesDb;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const CompanyInput = z
  .object({
    name: z.string().trim().min(1).max(200),
    orgNumber: z.string().trim().min(1).max(40),
    delivery: z.enum(["direct", "link"]),
    phone: z
      .string()
      .regex(/^\+\d{6,15}$/, "phone: + country code and number")
      .nullable()
      .default(null),
    issuerId: z.string().regex(GUID, "issuerId: the issuer's guid"),
    country: z.enum(["DK", "FI"]).default("DK"),
    dueDays: z.number().int().min(1).max(365).default(14),
    catalogue: z.string().min(1).max(100).default("fleet"),
  })
  .refine((c) => c.delivery === "link" || c.phone !== null, {
    message: "an InvoiceDirect company needs the account's phone",
    path: ["phone"],
  });
export type CompanyInput = z.input<typeof CompanyInput>;

export async function createCompany(ctx: FleetContext, input: unknown): Promise<string> {
  const c = CompanyInput.parse(input);
  const id = randomUUID();
  await invoicesDb(ctx)
    .insertInto("companies")
    .values({
      id,
      name: c.name,
      org_number: c.orgNumber,
      delivery: c.delivery,
      phone: c.phone,
      issuer_id: c.issuerId.toLowerCase(),
      country: c.country,
      due_days: c.dueDays,
      catalogue: c.catalogue,
      created_at: ctx.clock.now(),
    })
    .execute();
  return id;
}

/** Makes `companyId` the payer of every vend at `unitId` (subsidised vending); replaces an earlier payer. */
export async function assignUnit(ctx: FleetContext, companyId: string, unitId: string): Promise<void> {
  const db = invoicesDb(ctx);
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom("company_units").where("unit_id", "=", unitId).execute();
    await tx.insertInto("company_units").values({ unit_id: unitId, company_id: companyId }).execute();
  });
}

export const ProductInput = z.object({
  catalogue: z.string().min(1).max(100).default("fleet"),
  item: z.number().int().min(0).max(65_535),
  name: z.string().trim().min(1).max(200),
  vatBp: z.number().int().min(0).max(10_000),
  price: z.number().int().min(0).max(100_000_000),
});

/** Adds or replaces a catalogue entry (item → name, VAT rate in basis points, price incl. VAT). */
export async function setProduct(ctx: FleetContext, input: z.input<typeof ProductInput>): Promise<void> {
  const p = ProductInput.parse(input);
  const db = invoicesDb(ctx);
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom("products").where("catalogue", "=", p.catalogue).where("item", "=", p.item).execute();
    await tx
      .insertInto("products")
      .values({ catalogue: p.catalogue, item: p.item, name: p.name, vat_bp: p.vatBp, price: p.price })
      .execute();
  });
}

/**
 * The next number of an issuer, inside the caller's transaction: the counter row is created if missing and
 * incremented with `UPDATE … RETURNING` (PostgreSQL holds the row lock to commit; SQLite runs one writer),
 * so a rolled-back insert rolls the number back too: numbers are sequential and gap-free.
 */
async function nextNumber(tx: Transaction<InvoicesDatabase>, issuerId: string): Promise<number> {
  await tx
    .insertInto("invoice_numbers")
    .values({ issuer_id: issuerId, last_number: 0 })
    .onConflict((oc) => oc.column("issuer_id").doNothing())
    .execute();
  const row = await tx
    .updateTable("invoice_numbers")
    .set((eb) => ({ last_number: eb("last_number", "+", 1) }))
    .where("issuer_id", "=", issuerId)
    .returning("last_number")
    .executeTakeFirstOrThrow();
  return Number(row.last_number);
}

export interface DraftInput {
  companyId: string;
  month: string;
  issuerId: string;
  delivery: "direct" | "link";
  currency: string;
  issueDate: string;
  dueDate: string;
  built: BuiltInvoice;
}

/** Whether the company already has an invoice (any status) for the month. */
export async function hasInvoice(
  db: InvoicesDb | Transaction<InvoicesDatabase>,
  companyId: string,
  month: string,
): Promise<boolean> {
  const row = await db
    .selectFrom("invoices")
    .select("id")
    .where("company_id", "=", companyId)
    .where("month", "=", month)
    .executeTakeFirst();
  return row !== undefined;
}

/** The company's invoice of the month (any status): its id, number and status, or undefined. */
export async function invoiceOfMonth(
  db: InvoicesDb,
  companyId: string,
  month: string,
): Promise<{ id: string; number: number; status: string } | undefined> {
  const row = await db
    .selectFrom("invoices")
    .select(["id", "number", "status"])
    .where("company_id", "=", companyId)
    .where("month", "=", month)
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, number: Number(row.number), status: row.status };
}

/**
 * Inserts the month's invoice of a company as a draft with its articles and its number, in one transaction.
 * Returns null when the company already has an invoice for the month (also when a concurrent run inserted it
 * first: the unique (company, month) constraint refuses the second and its number is rolled back).
 */
export async function insertDraft(
  ctx: FleetContext,
  d: DraftInput,
): Promise<{ id: string; number: number } | null> {
  const db = invoicesDb(ctx);
  const now = ctx.clock.now();
  try {
    return await db.transaction().execute(async (tx) => {
      if (await hasInvoice(tx, d.companyId, d.month)) return null;
      const number = await nextNumber(tx, d.issuerId);
      const id = randomUUID();
      await tx
        .insertInto("invoices")
        .values({
          id,
          company_id: d.companyId,
          month: d.month,
          issuer_id: d.issuerId,
          number,
          status: "draft",
          remote_status: null,
          remote_id: null,
          link: null,
          delivery: d.delivery,
          currency: d.currency,
          total: d.built.total,
          vat_total: d.built.vatTotal,
          issue_date: d.issueDate,
          due_date: d.dueDate,
          last_sequence: -1,
          send_claimed_at: null,
          sent_at: null,
          paid_at: null,
          payment_date: null,
          note: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      if (d.built.articles.length > 0)
        await tx
          .insertInto("invoice_articles")
          .values(d.built.articles.map((a: ArticleLine, i) => articleRow(id, i + 1, a)))
          .execute();
      return { id, number };
    });
  } catch (e: unknown) {
    if (isUniqueViolation(e)) {
      if (await hasInvoice(db, d.companyId, d.month)) return null;
    }
    throw e;
  }
}

function articleRow(invoiceId: string, line: number, a: ArticleLine) {
  return {
    invoice_id: invoiceId,
    line,
    article_number: a.articleNumber,
    description: a.description,
    unit: a.unit,
    quantity: a.quantity,
    unit_price: a.unitPrice,
    vat_bp: a.vatBp,
    net: a.net,
    vat: a.vat,
    gross: a.gross,
  };
}

/** SQLite `SQLITE_CONSTRAINT_UNIQUE`/`_PRIMARYKEY`, PostgreSQL 23505. */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505";
}

/**
 * Applies a service status to the invoice with that service id. With a `sequence` (a callback) only a
 * newer Sequence than the last applied one changes it (order is not guaranteed, seed §Events); a status
 * read by GET has none and is applied when it differs. Paid and cancelled are final here.
 * @returns the invoice's status after, or null when no invoice has that service id.
 */
export async function applyRemoteStatus(
  db: InvoicesDb | Transaction<InvoicesDatabase>,
  now: number,
  e: { remoteId: string; status: string; sequence: number | null; paymentDate?: string | undefined },
): Promise<InvoiceStatus | null> {
  const inv = await db
    .selectFrom("invoices")
    .selectAll()
    .where("remote_id", "=", e.remoteId)
    .executeTakeFirst();
  if (inv === undefined) return null;
  if (FINAL.has(inv.status)) return inv.status;
  if (e.sequence !== null && e.sequence <= inv.last_sequence) return inv.status;
  const status = localStatus(e.status, inv.status);
  const patch: Partial<InvoicesTable> = {
    status,
    remote_status: e.status,
    updated_at: now,
    ...(e.sequence === null ? {} : { last_sequence: e.sequence }),
    ...(e.paymentDate === undefined ? {} : { payment_date: e.paymentDate.slice(0, 10) }),
    ...(status === "paid" ? { paid_at: now } : {}),
  };
  await db.updateTable("invoices").set(patch).where("id", "=", inv.id).execute();
  return status;
}

/** Companies with their units, by name (the Companies page). */
export async function loadCompanies(ctx: FleetContext): Promise<CompanyRow[]> {
  const db = invoicesDb(ctx);
  const companies = await db.selectFrom("companies").selectAll().orderBy("name").execute();
  const units = await db.selectFrom("company_units").selectAll().orderBy("unit_id").execute();
  return companies.map((c) => ({
    ...c,
    units: units.filter((u) => u.company_id === c.id).map((u) => u.unit_id),
  }));
}

/** Invoices, newest month first; optionally only one status or one company. */
export async function loadInvoices(
  ctx: FleetContext,
  filter: { status?: InvoicesTable["status"]; companyId?: string } = {},
): Promise<InvoiceRow[]> {
  let q = invoicesDb(ctx)
    .selectFrom("invoices")
    .innerJoin("companies", "companies.id", "invoices.company_id")
    .selectAll("invoices")
    .select("companies.name as company_name");
  if (filter.status !== undefined) q = q.where("invoices.status", "=", filter.status);
  if (filter.companyId !== undefined) q = q.where("invoices.company_id", "=", filter.companyId);
  return q.orderBy("invoices.month", "desc").orderBy("invoices.number", "desc").execute();
}

export async function loadInvoice(
  ctx: FleetContext,
  id: string,
): Promise<{ invoice: InvoiceRow; articles: InvoiceArticlesTable[] } | null> {
  const db = invoicesDb(ctx);
  const invoice = await db
    .selectFrom("invoices")
    .innerJoin("companies", "companies.id", "invoices.company_id")
    .selectAll("invoices")
    .select("companies.name as company_name")
    .where("invoices.id", "=", id)
    .executeTakeFirst();
  if (invoice === undefined) return null;
  const articles = await db
    .selectFrom("invoice_articles")
    .selectAll()
    .where("invoice_id", "=", id)
    .orderBy("line")
    .execute();
  return { invoice, articles };
}
