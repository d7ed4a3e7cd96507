/**
 * What settlement reconciliation (match.ts) reads and writes: the fleet's sales and billing rows, the
 * report's lines and transfers as input, and the classified lines and transfer totals it produces.
 */
import type { Minor } from "../../core/money.js";
import type { ReportLine, TransferRef } from "../../payment/reporting/client.js";
import type { SalesTable } from "../db/schema.js";
import type { FeeAgreement } from "./settings.js";

/**
 * A session as reconciliation sees it. `refundedBefore` / `refundedBy`, when known, are what the journal had
 * refunded before the range started and by the time it ended (issue 30): a refund made after the range is
 * compared on its own day, a refund of an earlier session within the range exactly.
 */
export type SaleRow = {
  refundedBefore?: Minor;
  refundedBy?: Minor;
  /**
   * For a session of an earlier day paid again in the range (issue 42): what the report's lines of the
   * days before the range paid for its order id, so that a second capture is seen on the night it is made.
   */
  paidBefore?: Minor;
} & Pick<
  SalesTable,
  | "unit_id"
  | "session_id"
  | "order_id"
  | "payment_id"
  | "driver"
  | "captured"
  | "refunded"
  | "closed_at"
  | "day"
  | "currency"
>;

export const LINE_CLASSES = [
  "matched",
  "missingInReport",
  "unknownInFleet",
  "amountMismatch",
  "currencyMismatch",
  "feeMismatch",
  "refundMatched",
  "refundUnmatched",
  "fee",
  "transfer",
] as const;
export type LineClass = (typeof LINE_CLASSES)[number];

export interface ReconLine {
  day: string;
  class: LineClass;
  unit_id: string | null;
  session_id: string | null;
  order_id: string | null;
  /** The report's transaction id(s), or the transfer reference. */
  reference: string | null;
  /** What the journal says (minor units; refunds and fees as positive amounts). */
  expected: Minor | null;
  /** What the report says. */
  reported: Minor | null;
  /** ISO 4217 code of `expected` and `reported` (the report's when they differ); null for none. */
  currency: string | null;
  reason: string;
}

export interface TransferTotal {
  paymentPointId: string;
  reference: string;
  date: string;
  currency: string;
  /** Sum of the transfer's own contents (seed 002 transfer contents), each line tied to its session. */
  expected: Minor;
  /** The amount transferred. */
  received: Minor;
  difference: Minor;
}

/**
 * A payment the fleet itself asked for (issue 18), not a vend: a plan's monthly charge and an overage one-off
 * (the subscriptions provider is their payment point, the charge's external id their order id), a refund of
 * one of them (its own external id), or a company invoice (the issuer is its payment point, the invoice
 * number its order id). Reported under the payment point of the provider or the issuer.
 */
export interface BillingRow {
  kind: "planCharge" | "overage" | "planRefund" | "invoice";
  /** The order id the report carries (external id, or the invoice number). */
  orderId: string;
  /** Set for invoices: the issuer (numbers are unique per issuer only). */
  point?: string;
  /** The fleet's own id (charge, overage, refund or invoice id), shown as the line's session. */
  ref: string;
  /** Who is billed (member or company id), shown in the reason. */
  payer: string;
  /** `YYYY-MM-DD`: the day it was paid (or refunded), in the fleet's time zone. */
  day: string;
  /** Paid (a refund: refunded), minor units. */
  amount: Minor;
}

export interface MatchInput {
  from: string;
  to: string;
  sales: readonly SaleRow[];
  /**
   * Sessions outside [from, to] whose order id a report line carries (a refund or second capture on a later
   * day, issue 30): their lines in the range are checked against what the journal holds, nothing else.
   */
  related?: readonly SaleRow[];
  lines: readonly ReportLine[];
  /** Transfers dated in the range, each with its own contents when fetched. */
  transfers: readonly (TransferRef & { contents?: readonly ReportLine[] })[];
  /** Payment point id → unit id, for points that belong to one unit. */
  points?: ReadonlyMap<string, string>;
  /** Time zone of `sales.day` (days of report lines the fleet does not know). */
  timeZone: string;
  /** The agreed transaction fee: a session's reported TransactionFee lines must equal it (issue 30). */
  transactionFee?: FeeAgreement | null;
  /** Plan charges, overages, their refunds and invoices paid in the range (issue 18). */
  billing?: readonly BillingRow[];
}
