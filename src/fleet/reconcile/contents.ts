/**
 * A transfer's contents against the transaction report (issue 42): the same transaction (its
 * `paymentTransactionId` and type: a payment and its fee share the id) listed by both with different amounts means the service's two accounts of it
 * disagree, although the transfer may equal its contents and the report's lines their sessions. Each such
 * transaction is reported once, on its sale's line: a fee as `feeMismatch` (replacing the agreed-fee check of
 * that sale, so one wrong fee is one line), a payment as `amountMismatch`, a refund as `refundUnmatched`.
 */
import type { ReportLine, TransferRef } from "../../payment/reporting/client.js";
import { dayOf } from "../context.js";
import type { LineClass, MatchInput, ReconLine, SaleRow } from "./types.js";

/** Positive amount of a line (payments positive; refunds and fees as what they take). */
const size = (l: ReportLine) => Math.abs(l.amount);

/** Adds a line for each transaction the transfer's contents and the range's report lines list differently. */
export function checkContents(
  input: MatchInput,
  t: TransferRef,
  contents: readonly ReportLine[],
  lines: ReconLine[],
): void {
  const reported = new Map<string, ReportLine>();
  // A payment and its fee share the transaction id: a line is its id and its type.
  const key = (l: ReportLine) => `${l.paymentTransactionId}|${l.type}`;
  for (const l of input.lines) reported.set(key(l), l);
  const sales = new Map<string, SaleRow>();
  for (const s of (input.related ?? []).concat(input.sales)) sales.set(s.order_id, s);
  for (const c of contents) {
    const r = reported.get(key(c));
    if (r === undefined || (r.amount === c.amount && r.currencyCode === c.currencyCode)) continue;
    const s = c.orderId === null ? undefined : sales.get(c.orderId);
    const cls: LineClass =
      c.type === "Payment" ? "amountMismatch" : c.type === "Refund" ? "refundUnmatched" : "feeMismatch";
    const what = c.type === "Payment" ? "payment" : c.type === "Refund" ? "refund" : "fee";
    const line: ReconLine = {
      day: s?.day ?? dayOf(c.at, input.timeZone),
      class: cls,
      unit_id: s?.unit_id ?? input.points?.get(c.paymentPointId) ?? null,
      session_id: s?.session_id ?? null,
      order_id: c.orderId,
      reference: c.paymentTransactionId,
      expected: size(c),
      reported: size(r),
      currency: c.currencyCode,
      reason: `transfer ${t.transferReference} ${c.type === "Payment" ? "pays" : "deducts"} ${what} ${size(c)} ${c.currencyCode}, the report's line says ${size(r)} ${r.currencyCode}`,
    };
    // One wrong fee is one line: this one replaces the sale's agreed-fee check.
    const i =
      cls === "feeMismatch" && c.orderId !== null
        ? lines.findIndex((l) => l.class === "feeMismatch" && l.order_id === c.orderId)
        : -1;
    if (i >= 0) {
      const agreed = lines[i]?.expected;
      lines[i] = { ...line, reason: `${line.reason} (${agreed ?? "?"} agreed)` };
    } else lines.push(line);
  }
}
