/**
 * The batch intake of invoices (seed 002 §Invoices, batch operations): the shape of the array and each
 * InvoiceNumber (present, not repeated, not used) are checked when the batch arrives; the admitted items wait
 * for the callback job, which validates the rest.
 */
import { randomUUID } from "node:crypto";
import type { InvoiceMerchant } from "./model.js";
import { CODES, InvoiceError, type InvoiceKind } from "./validate.js";

/** Seed 002 §Limits. */
const BATCH_LIMIT = 2000;

/** An admitted batch item, waiting for the callback job's validation. */
export interface PendingBatchItem {
  id: string;
  kind: InvoiceKind;
  merchantId: string;
  raw: unknown;
  href: string | null;
}

/** The key that makes an InvoiceNumber unique: merchant, issuer and number. */
export function numberKey(
  merchantId: string,
  input: { InvoiceIssuer: string; InvoiceNumber: string },
): string {
  return `${merchantId}|${input.InvoiceIssuer}|${input.InvoiceNumber}`;
}

/** The number key of a raw batch item (its InvoiceIssuer lower-cased, as parsing would make it). */
export function rawNumberKey(merchantId: string, o: Record<string, unknown>, number: string): string {
  return numberKey(merchantId, {
    InvoiceIssuer: typeof o.InvoiceIssuer === "string" ? o.InvoiceIssuer.toLowerCase() : "",
    InvoiceNumber: number,
  });
}

/**
 * Checks a batch against the numbers in use: the answer's Accepted[] and Rejected[] (with ErrorCode), the
 * admitted items and the number keys they take.
 */
export function admitBatch(
  m: InvoiceMerchant,
  body: unknown,
  kind: InvoiceKind,
  linkBase: string,
  numbers: ReadonlySet<string>,
) {
  if (!Array.isArray(body) || body.length === 0 || body.length > BATCH_LIMIT)
    throw new InvoiceError(
      400,
      "InputError",
      CODES.batch,
      `the body must be an array of 1 to ${BATCH_LIMIT} invoices`,
    );
  const Accepted: { InvoiceNumber: string; InvoiceId: string }[] = [];
  const Rejected: { InvoiceNumber: string | null; ErrorText: string; ErrorCode: number }[] = [];
  const seen = new Set<string>();
  const items: PendingBatchItem[] = [];
  for (const raw of body) {
    const o =
      typeof raw === "object" && raw !== null && !Array.isArray(raw)
        ? (raw as Record<string, unknown>)
        : null;
    const number =
      o !== null && typeof o.InvoiceNumber === "string" && o.InvoiceNumber.trim() !== ""
        ? o.InvoiceNumber
        : null;
    if (o === null || number === null) {
      Rejected.push({
        InvoiceNumber: number,
        ErrorText: "InvoiceNumber is required",
        ErrorCode: Number(CODES.invoiceNumber),
      });
      continue;
    }
    const key = rawNumberKey(m.merchantId, o, number);
    if (seen.has(key) || numbers.has(key)) {
      Rejected.push({
        InvoiceNumber: number,
        ErrorText: "InvoiceNumber is already used for this issuer",
        ErrorCode: Number(CODES.duplicateNumber),
      });
      continue;
    }
    seen.add(key);
    const id = randomUUID();
    items.push({
      id,
      kind,
      merchantId: m.merchantId,
      raw,
      href: kind === "link" ? `${linkBase}/${id}` : null,
    });
    Accepted.push({ InvoiceNumber: number, InvoiceId: id });
  }
  return { Accepted, Rejected, items, keys: seen };
}
