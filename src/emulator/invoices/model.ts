/**
 * The invoice service's data (seed 002 §Invoices): issuers and merchants, invoices and their statuses, the
 * callback elements the job posts, consents, and the 404/409 answers the flows share.
 */
import { InvoiceError, type InvoiceInput, type InvoiceKind } from "./validate.js";

export type IssuerStatus = "pending" | "enabled" | "disabled";

export interface Issuer {
  Id: string;
  Name: string;
  AccountType: "Account";
  Status: IssuerStatus;
  Address: string;
  City: string;
  ZipCode: string;
}

export interface InvoiceMerchant {
  merchantId: string;
  /** The merchant's VAT number: the ledger's `merchant`, as transaction reporting groups it. */
  vat: string;
  name: string;
  /** The seeded bearer token of this merchant. */
  accessToken: string;
  issuers: Issuer[];
  /** Callback URL and the Authorization header value (Basic or ApiKey), from the PUT auth operations. */
  callback: { url: string; authorization: string } | null;
}

/** Status names as the callbacks and GET answers carry them (seed §Events). */
export type InvoiceStatus = "Created" | "Accepted" | "Paid" | "Rejected" | "Expired" | "Canceled";

export interface Invoice {
  id: string;
  kind: InvoiceKind;
  merchantId: string;
  input: InvoiceInput;
  status: InvoiceStatus;
  /** The paying user (InvoiceDirect: the alias; InvoiceLink: whoever accepted). */
  payer: string | null;
  /** Scheduled payment date, once accepted. */
  paymentDate: string | null;
  /** Next callback Sequence; internal events without a callback also use one (gaps, seed §Invoice callback). */
  sequence: number;
  viaBatch: boolean;
  href: string | null;
  paymentTransactionId: string | null;
}

export interface CallbackElement {
  InvoiceId: string;
  Status: InvoiceStatus | "Invalid";
  Date: string;
  Sequence: number;
  ErrorCode?: number;
  ErrorMessage?: string;
  PaymentDate?: string;
  Links?: { Rel: "user-redirect"; Href: string }[];
}

export interface DeliveredCallback {
  merchantId: string;
  url: string;
  at: number;
  elements: CallbackElement[];
}

export type ConsentState = "Pending" | "Granted" | "Denied";

export interface Consent {
  ConsentId: string;
  InvoiceId: string;
  issuerId: string;
  merchantId: string;
  PhoneNumber: string | null;
  State: ConsentState;
}

export function notFound(what: string): never {
  throw new InvoiceError(404, "DomainError", "10404", `${what} not found`);
}

export function conflict(message: string): never {
  throw new InvoiceError(409, "DomainError", "10409", message);
}
