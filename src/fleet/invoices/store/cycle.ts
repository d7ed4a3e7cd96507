/**
 * The monthly invoice run's queries (cycle.ts runs them in its order): the companies, what a company's
 * invoice is built from (its units, its plan members, the month's sales, its catalogue), the drafts claimed
 * and sent, the open invoices followed, the overdue marked and the month counted by status.
 */
import type { FleetContext } from "../../context.js";
import type { InvoicesDb } from "./invoices.js";

/** Every company, oldest first (then by name and id). */
export function companiesInOrder(db: InvoicesDb) {
  return db.selectFrom("companies").selectAll().orderBy("created_at").orderBy("name").orderBy("id").execute();
}

/** The units whose vends a company pays. */
export function companyUnitIds(db: InvoicesDb, companyId: string) {
  return db.selectFrom("company_units").select("unit_id").where("company_id", "=", companyId).execute();
}

/** The plan members a company pays for (the plans feature's members table, in the fleet database). */
export function companyMemberIds(ctx: FleetContext, companyId: string) {
  return ctx.db.selectFrom("members").select("id").where("company_id", "=", companyId).execute();
}

/** One read of a month (`first`..`last` days): the vends at `unitIds` and the plan vends of `memberIds`. */
export function monthSales(
  db: InvoicesDb,
  first: string,
  last: string,
  unitIds: readonly string[],
  memberIds: readonly string[],
) {
  return db
    .selectFrom("sales")
    .select(["unit_id", "item", "vends_ok", "member_id", "result"])
    .where("day", ">=", first)
    .where("day", "<=", last)
    .where((eb) =>
      eb.or([
        ...(unitIds.length > 0 ? [eb("unit_id", "in", unitIds)] : []),
        ...(memberIds.length > 0 ? [eb("member_id", "in", memberIds)] : []),
      ]),
    )
    .orderBy("unit_id")
    .orderBy("seq")
    .execute();
}

/** The products of a catalogue. */
export function catalogueProducts(db: InvoicesDb, catalogue: string) {
  return db.selectFrom("products").selectAll().where("catalogue", "=", catalogue).execute();
}

/** Every draft, by number. */
export function draftInvoices(db: InvoicesDb) {
  return db.selectFrom("invoices").selectAll().where("status", "=", "draft").orderBy("number").execute();
}

/**
 * Claims a draft for sending at `now`: true when this run claimed it (unclaimed, or its claim older than
 * `claimTtlMs`: a run that died), false when another run holds it or it is no longer a draft.
 */
export async function claimDraft(
  db: InvoicesDb,
  id: string,
  now: number,
  claimTtlMs: number,
): Promise<boolean> {
  const claimed = await db
    .updateTable("invoices")
    .set({ send_claimed_at: now, updated_at: now })
    .where("id", "=", id)
    .where("status", "=", "draft")
    .where((eb) => eb.or([eb("send_claimed_at", "is", null), eb("send_claimed_at", "<", now - claimTtlMs)]))
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

/** An invoice's articles, by line. */
export function invoiceArticles(db: InvoicesDb, invoiceId: string) {
  return db
    .selectFrom("invoice_articles")
    .selectAll()
    .where("invoice_id", "=", invoiceId)
    .orderBy("line")
    .execute();
}

/** An invoice the service took: sent, with its id and link (InvoiceLink). */
export async function markSent(
  db: InvoicesDb,
  id: string,
  r: { invoiceId: string; link: string | null },
  now: number,
): Promise<void> {
  await db
    .updateTable("invoices")
    .set({
      status: "sent",
      remote_id: r.invoiceId,
      remote_status: "Created",
      link: r.link,
      sent_at: now,
      updated_at: now,
      note: null,
    })
    .where("id", "=", id)
    .execute();
}

/**
 * A send that failed, with the note: `duplicate` (the service has it: sent, id learnt from a callback),
 * `refused` (unpaid, for a person to look at) or `retry` (the claim released for the next run).
 */
export async function markSendFailed(
  db: InvoicesDb,
  id: string,
  outcome: "duplicate" | "refused" | "retry",
  note: string,
  now: number,
): Promise<void> {
  await db
    .updateTable("invoices")
    .set({
      ...(outcome === "duplicate"
        ? { status: "sent" as const, sent_at: now }
        : outcome === "refused"
          ? { status: "unpaid" as const }
          : { send_claimed_at: null }),
      note,
      updated_at: now,
    })
    .where("id", "=", id)
    .execute();
}

/** The open invoices (sent or overdue) with a service id. */
export function openInvoices(db: InvoicesDb) {
  return db
    .selectFrom("invoices")
    .select(["id", "remote_id", "status"])
    .where("status", "in", ["sent", "overdue"])
    .where("remote_id", "is not", null)
    .execute();
}

/** Marks overdue every sent invoice due before `today`; returns how many. */
export async function markOverdueBefore(db: InvoicesDb, today: string, now: number): Promise<number> {
  const overdue = await db
    .updateTable("invoices")
    .set({ status: "overdue", updated_at: now })
    .where("status", "=", "sent")
    .where("due_date", "<", today)
    .executeTakeFirst();
  return Number(overdue.numUpdatedRows);
}

/** A month's invoices counted by status. */
export function countByStatus(db: InvoicesDb, month: string) {
  return db
    .selectFrom("invoices")
    .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
    .where("month", "=", month)
    .groupBy("status")
    .execute();
}
