import { describe, expect, it } from "vitest";
import type { ReportLine, TransferRef } from "../../payment/reporting/client.js";
import { type BillingRow, problems, reconcile } from "./match.js";

const PROVIDER = "sub-provider-1";
const ISSUER_A = "issuer-a";
const ISSUER_B = "issuer-b";
const AT = Date.parse("2026-10-31T10:00:00Z");

let n = 0;
function line(point: string, type: string, amount: number, orderId: string, transfer = "T1"): ReportLine {
  n++;
  return {
    paymentPointId: point,
    type,
    amount,
    currencyCode: "DKK",
    timestamp: new Date(AT).toISOString(),
    at: AT,
    paymentTransactionId: `tx-${n}`,
    orderId,
    transferReference: transfer,
  };
}

function bill(kind: BillingRow["kind"], orderId: string, amount: number, point?: string): BillingRow {
  return {
    kind,
    orderId,
    ref: `ref-${orderId}`,
    payer: "m-1",
    day: "2026-10-31",
    amount,
    ...(point === undefined ? {} : { point }),
  };
}

describe("reconciliation of the fleet's own billing (plan charges, overages, refunds, invoices)", () => {
  it("matches each under its provider or issuer, and totals the transfers", () => {
    const lines = [
      line(PROVIDER, "Payment", 9900, "m-1-2026-10-1"),
      line(PROVIDER, "TransactionFee", -99, "m-1-2026-10-1"),
      line(PROVIDER, "Payment", 600, "ov-m-1-2026-09"),
      line(PROVIDER, "Refund", -300, "r-1"),
      line(ISSUER_A, "Payment", 12_345, "1", "TA"),
      line(ISSUER_B, "Payment", 500, "1", "TB"),
    ];
    // Each transfer with its own contents (issue 30): the lines of its reference.
    const contents = (ref: string) => lines.filter((l) => l.transferReference === ref);
    const transfers: (TransferRef & { contents: ReportLine[] })[] = [
      {
        paymentPointId: PROVIDER,
        transferReference: "T1",
        transferReferenceDate: "2026-11-01",
        amount: 9900 - 99 + 600 - 300,
        currencyCode: "DKK",
        contents: contents("T1"),
      },
      {
        paymentPointId: ISSUER_A,
        transferReference: "TA",
        transferReferenceDate: "2026-11-01",
        amount: 12_345,
        currencyCode: "DKK",
        contents: contents("TA"),
      },
      {
        paymentPointId: ISSUER_B,
        transferReference: "TB",
        transferReferenceDate: "2026-11-01",
        amount: 500,
        currencyCode: "DKK",
        contents: contents("TB"),
      },
    ];
    const r = reconcile({
      from: "2026-10-31",
      to: "2026-10-31",
      sales: [],
      lines,
      transfers,
      timeZone: "UTC",
      billing: [
        bill("planCharge", "m-1-2026-10-1", 9900),
        bill("overage", "ov-m-1-2026-09", 600),
        bill("planRefund", "r-1", 300),
        bill("invoice", "1", 12_345, ISSUER_A),
        bill("invoice", "1", 500, ISSUER_B),
      ],
    });
    expect(problems(r)).toEqual([]);
    expect(r.clean).toBe(true);
    expect(r.counts).toMatchObject({ matched: 4, refundMatched: 1, fee: 1, transfer: 3 });
    expect(r.transfers.map((t) => t.difference)).toEqual([0, 0, 0]);
  });

  it("reports a missing charge, an overage amount mismatch, an unmatched refund and an unknown invoice payment", () => {
    const r = reconcile({
      from: "2026-10-31",
      to: "2026-10-31",
      sales: [],
      lines: [
        line(PROVIDER, "Payment", 500, "ov-m-1-2026-09"),
        line(PROVIDER, "Refund", -300, "r-1"),
        line(PROVIDER, "Refund", -300, "r-1"),
        line(ISSUER_A, "Payment", 777, "99", "TA"),
      ],
      transfers: [],
      timeZone: "UTC",
      billing: [
        bill("planCharge", "m-1-2026-10-1", 9900),
        bill("overage", "ov-m-1-2026-09", 600),
        bill("planRefund", "r-1", 300),
        bill("invoice", "1", 12_345, ISSUER_A),
      ],
    });
    expect(r.clean).toBe(false);
    const got = problems(r).map((l) => [l.class, l.order_id, l.expected, l.reported]);
    expect(got).toEqual([
      ["missingInReport", "m-1-2026-10-1", 9900, 0],
      ["amountMismatch", "ov-m-1-2026-09", 600, 500],
      ["refundUnmatched", "r-1", 300, 600],
      ["missingInReport", "1", 12_345, 0],
      ["unknownInFleet", "99", null, 777],
    ]);
    expect(problems(r)[0]?.session_id).toBe("ref-m-1-2026-10-1");
  });
});
