/**
 * The invoice callbacks' queries: an invoice found by its service id, a lost create answer's invoice
 * adopting its service id, and one callback element applied in its own transaction with its seen-row.
 */
import type { FleetContext } from "../../context.js";
import { applyRemoteStatus, type InvoicesDb, invoicesDb } from "./invoices.js";

/** The id of the invoice the service calls `remoteId`, or undefined. */
export function invoiceByRemoteId(db: InvoicesDb, remoteId: string) {
  return db.selectFrom("invoices").select("id").where("remote_id", "=", remoteId).executeTakeFirst();
}

/**
 * The local invoice of the issuer with that number, sent and without a service id, adopts `remoteId`;
 * true when one did.
 */
export async function adoptRemoteId(
  ctx: FleetContext,
  issuerId: string,
  number: number,
  remoteId: string,
): Promise<boolean> {
  const r = await invoicesDb(ctx)
    .updateTable("invoices")
    .set({ remote_id: remoteId, note: null, updated_at: ctx.clock.now() })
    .where("issuer_id", "=", issuerId)
    .where("number", "=", number)
    .where("remote_id", "is", null)
    .where("status", "=", "sent")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * One callback element for invoice `invoiceId`, in one transaction: its seen-row (a replay violates its
 * unique key and throws), then the status applied; "applied" when its Sequence is newer than the last one
 * applied, else "stale".
 */
export function applyCallbackElement(
  db: InvoicesDb,
  invoiceId: string,
  el: { InvoiceId: string; Sequence: number; Status: string; PaymentDate?: string | undefined },
  now: number,
): Promise<"applied" | "stale"> {
  return db.transaction().execute(async (tx) => {
    await tx
      .insertInto("invoice_callbacks")
      .values({ remote_id: el.InvoiceId, sequence: el.Sequence, status: el.Status, received_at: now })
      .execute();
    const before = await tx
      .selectFrom("invoices")
      .select(["status", "last_sequence"])
      .where("id", "=", invoiceId)
      .executeTakeFirstOrThrow();
    await applyRemoteStatus(tx, now, {
      remoteId: el.InvoiceId,
      status: el.Status,
      sequence: el.Sequence,
      paymentDate: el.PaymentDate,
    });
    return el.Sequence > before.last_sequence ? "applied" : "stale";
  });
}
