/**
 * Direct-invoice consents (seed 002 §Consents): the merchant asks one after an InvoiceLink; the payer grants
 * or denies it in the app once the invoice is paid, and a payer who already granted the issuer is granted at
 * once; the granted consents of an issuer are listed in pages of 100.
 */
import { randomUUID } from "node:crypto";
import { type Consent, conflict, type Invoice, type InvoiceMerchant, notFound } from "./model.js";
import { CODES, domainError, InvoiceError } from "./validate.js";

const CONSENT_PAGE = 100;

/** How the consents find invoices: the merchant's own (`invoice`) or any (`find`); both throw 404. */
export interface InvoiceLookup {
  invoice(m: InvoiceMerchant, id: string): Invoice;
  find(id: string): Invoice;
}

export class ConsentBook {
  private readonly consents = new Map<string, Consent>();

  constructor(private readonly invoices: InvoiceLookup) {}

  create(m: InvoiceMerchant, invoiceId: unknown): Consent {
    if (typeof invoiceId !== "string")
      throw new InvoiceError(400, "InputError", CODES.body, "InvoiceId is required");
    const inv = this.invoices.invoice(m, invoiceId);
    if (inv.kind !== "link") domainError("10601", "consent is asked after an InvoiceLink");
    const consent: Consent = {
      ConsentId: randomUUID(),
      InvoiceId: inv.id,
      issuerId: inv.input.InvoiceIssuer,
      merchantId: m.merchantId,
      PhoneNumber: null,
      State: "Pending",
    };
    if (inv.status === "Paid" && this.hasGranted(consent.issuerId, inv.payer)) {
      consent.State = "Granted";
      consent.PhoneNumber = inv.payer;
    }
    this.consents.set(consent.ConsentId, consent);
    return consent;
  }

  get(m: InvoiceMerchant, id: string): Consent {
    const c = this.consents.get(id.toLowerCase());
    if (c === undefined || c.merchantId !== m.merchantId) notFound("consent");
    return c;
  }

  /** Granted consents of an issuer, in pages of 100; `PagingState` is the offset, opaque (base64url). */
  granted(m: InvoiceMerchant, issuerId: string, paging: string | null) {
    const all = [...this.consents.values()].filter(
      (c) => c.merchantId === m.merchantId && c.issuerId === issuerId.toLowerCase() && c.State === "Granted",
    );
    let offset = 0;
    if (paging !== null) {
      offset = Number(Buffer.from(paging, "base64url").toString("utf8"));
      if (!Number.isSafeInteger(offset) || offset < 0)
        throw new InvoiceError(400, "InputError", CODES.body, "PagingState is not valid");
    }
    const page = all.slice(offset, offset + CONSENT_PAGE);
    const next =
      offset + CONSENT_PAGE < all.length
        ? Buffer.from(String(offset + CONSENT_PAGE)).toString("base64url")
        : null;
    return { GrantedConsents: page.map(consentView), PagingState: next };
  }

  /** The user decides in the consent window, shown after the InvoiceLink is paid. */
  decide(id: string, phone: string, grant: boolean): Consent {
    const c = this.consents.get(id.toLowerCase());
    if (c === undefined) notFound("consent");
    const inv = this.invoices.find(c.InvoiceId);
    if (inv.status !== "Paid" || inv.payer !== phone)
      conflict("the consent window shows after the payer paid the invoice");
    if (c.State !== "Pending") conflict(`the consent is already ${c.State}`);
    c.State = grant ? "Granted" : "Denied";
    c.PhoneNumber = grant ? phone : null;
    return c;
  }

  /** A paid invoice: its pending consents are granted when the payer already granted the issuer. */
  grantOnPayment(inv: Invoice): void {
    for (const c of this.consents.values()) {
      if (c.InvoiceId === inv.id && c.State === "Pending" && this.hasGranted(c.issuerId, inv.payer)) {
        c.State = "Granted";
        c.PhoneNumber = inv.payer;
      }
    }
  }

  private hasGranted(issuerId: string, phone: string | null): boolean {
    for (const c of this.consents.values())
      if (c.issuerId === issuerId && c.State === "Granted" && c.PhoneNumber === phone) return true;
    return false;
  }
}

export function consentView(c: Consent) {
  return { ConsentId: c.ConsentId, InvoiceId: c.InvoiceId, PhoneNumber: c.PhoneNumber, State: c.State };
}
