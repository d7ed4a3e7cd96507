/**
 * Issue 30, the matcher and the fleet's reads: currencies are compared and never summed together (defect
 * 1); a transfer is checked against its own contents in any time zone, DST change days included (defect 2);
 * a later day's refund is tied to its session by order id across all time (defect 3); the dashboard's
 * empty state says what to do.
 */
import { describe, expect, it } from "vitest";
import { insertSales } from "../../../scripts/reconcileDay.js";
import type { ReportLine, TransferRef } from "../../payment/reporting/client.js";
import { openFleetDb } from "../database.js";
import type { SalesTable } from "../db/schema.js";
import { problems, reconcile, type SaleRow } from "./match.js";
import { dayStart, loadRelated, loadSales } from "./run.js";
import { renderRunsPage } from "./views.js";

let n = 0;
function line(o: Partial<ReportLine> & { at: number; amount: number }): ReportLine {
  n++;
  return {
    paymentPointId: "pp-1",
    type: "Payment",
    currencyCode: "DKK",
    timestamp: new Date(o.at).toISOString(),
    paymentTransactionId: `tx-${n}`,
    orderId: `vm1-1764000000-${n}`,
    transferReference: null,
    ...o,
  };
}

function sale(l: ReportLine, day: string, over: Partial<SaleRow> = {}): SaleRow {
  return {
    unit_id: "vm1",
    session_id: `s-${l.orderId}`,
    order_id: l.orderId ?? "",
    payment_id: l.paymentTransactionId,
    driver: "v10",
    captured: l.amount,
    refunded: 0,
    closed_at: l.at,
    day,
    currency: l.currencyCode,
    ...over,
  };
}

function transfer(
  date: string,
  contents: ReportLine[],
  amount = contents.reduce((s, l) => s + l.amount, 0),
): TransferRef & { contents: ReportLine[] } {
  return {
    paymentPointId: "pp-1",
    transferReference: `T-${date}`,
    transferReferenceDate: date,
    amount,
    currencyCode: contents[0]?.currencyCode ?? "DKK",
    contents,
  };
}

describe("issue 30: currencies (defect 1)", () => {
  it("a report line in another currency than its sale is a difference of its own class", () => {
    const pay = line({ at: Date.parse("2026-11-24T10:00:00Z"), amount: 1500, currencyCode: "EUR" });
    const r = reconcile({
      from: "2026-11-24",
      to: "2026-11-24",
      sales: [sale(pay, "2026-11-24", { currency: "DKK" })],
      lines: [pay],
      transfers: [],
      timeZone: "UTC",
    });
    expect(r.clean).toBe(false);
    expect(problems(r)).toEqual([
      expect.objectContaining({
        class: "currencyMismatch",
        unit_id: "vm1",
        session_id: `s-${pay.orderId}`,
        expected: 1500,
        reported: 1500,
        currency: "EUR",
        reason: "report in EUR, journal in DKK",
      }),
    ]);
  });

  it("totals, fees and transfers are per currency, never summed across currencies", () => {
    const at = Date.parse("2026-11-24T10:00:00Z");
    const dkk = line({ at, amount: 1000, currencyCode: "DKK" });
    const eur = line({ at, amount: 700, currencyCode: "EUR", paymentPointId: "pp-2" });
    const fee = line({ at, amount: -10, currencyCode: "EUR", type: "TransactionFee", orderId: eur.orderId });
    const r = reconcile({
      from: "2026-11-24",
      to: "2026-11-24",
      sales: [sale(dkk, "2026-11-24"), sale(eur, "2026-11-24")],
      lines: [dkk, eur, fee],
      transfers: [
        transfer("2026-11-25", [dkk]),
        { ...transfer("2026-11-25", [eur, fee]), transferReference: "T-eur" },
      ],
      timeZone: "UTC",
    });
    expect(r.clean).toBe(true);
    expect(r.totals).toEqual([
      {
        currency: "DKK",
        captured: 1000,
        refunded: 0,
        paid: 1000,
        refundReported: 0,
        fees: 0,
        transferred: 1000,
      },
      {
        currency: "EUR",
        captured: 700,
        refunded: 0,
        paid: 700,
        refundReported: 0,
        fees: 10,
        transferred: 690,
      },
    ]);
    expect(r.lines.filter((l) => l.class === "fee")).toEqual([
      expect.objectContaining({ currency: "EUR", reported: 10 }),
    ]);
    expect(r.transfers.map((t) => [t.currency, t.difference])).toEqual([
      ["DKK", 0],
      ["EUR", 0],
    ]);
  });
});

describe("issue 30: transfers against their own contents (defect 2)", () => {
  it("Etc/GMT-12: the day without sales has no transfer difference; the sales day is compared", () => {
    // Sales at 18:00-20:00 UTC on the 24th are the 25th in Etc/GMT-12 (UTC+12); the service's transfer of
    // its day 24 is dated the 25th.
    const tz = "Etc/GMT-12";
    const lines = [0, 1, 2].map((i) =>
      line({
        at: Date.parse(`2026-11-24T${18 + i}:00:00Z`),
        amount: i === 2 ? 3746 : 3745,
        transferReference: "T-2026-11-25",
      }),
    );
    const sales = lines.map((l) => sale(l, "2026-11-25"));
    const t = transfer("2026-11-25", lines);
    const empty = reconcile({
      from: "2026-11-24",
      to: "2026-11-24",
      sales: [],
      related: sales,
      lines: [],
      transfers: [t],
      timeZone: tz,
    });
    expect(problems(empty)).toEqual([]);
    expect(empty.clean).toBe(true);
    expect(empty.transfers[0]).toMatchObject({ expected: 11236, received: 11236, difference: 0 });
    const full = reconcile({
      from: "2026-11-25",
      to: "2026-11-25",
      sales,
      lines,
      transfers: [],
      timeZone: tz,
    });
    expect(full.clean).toBe(true);
    expect(full.counts.matched).toBe(3);
    // A transfer that is not what its contents add up to is a difference, in any zone.
    const short = reconcile({
      from: "2026-11-24",
      to: "2026-11-24",
      sales: [],
      related: sales,
      lines: [],
      transfers: [transfer("2026-11-25", lines, 11236 - 100)],
      timeZone: tz,
    });
    expect(problems(short)).toEqual([
      expect.objectContaining({ class: "transfer", expected: 11236, reported: 11136, currency: "DKK" }),
    ]);
  });

  it("Europe/Copenhagen on its DST change days: 23- and 25-hour days, sales just after midnight, clean", () => {
    const tz = "Europe/Copenhagen";
    expect(new Date(dayStart("2026-03-29", tz)).toISOString()).toBe("2026-03-28T23:00:00.000Z");
    expect(new Date(dayStart("2026-03-30", tz)).toISOString()).toBe("2026-03-29T22:00:00.000Z");
    expect(new Date(dayStart("2026-10-25", tz)).toISOString()).toBe("2026-10-24T22:00:00.000Z");
    expect(new Date(dayStart("2026-10-26", tz)).toISOString()).toBe("2026-10-25T23:00:00.000Z");
    for (const [day, prev, next] of [
      ["2026-03-29", "2026-03-28", "2026-03-30"],
      ["2026-10-25", "2026-10-24", "2026-10-26"],
    ] as const) {
      // 00:30 local (the service's previous day in UTC), midday, and 23:30 local.
      const at = [
        dayStart(day, tz) + 30 * 60_000,
        dayStart(day, tz) + 12 * 3600_000,
        dayStart(next, tz) - 1800_000,
      ];
      const lines = at.map((t, i) => line({ at: t, amount: 1000 + i }));
      const sales = lines.map((l) => sale(l, day));
      // The service's transfers cover UTC days: the 00:30 sale is in the transfer dated `day`.
      const early = transfer(day, [lines[0] as ReportLine]);
      const rest = transfer(next, lines.slice(1));
      const r = reconcile({ from: day, to: day, sales, lines, transfers: [rest], timeZone: tz });
      expect(problems(r)).toEqual([]);
      const before = reconcile({
        from: prev,
        to: prev,
        sales: [],
        related: sales,
        lines: [],
        transfers: [early],
        timeZone: tz,
      });
      expect(problems(before)).toEqual([]);
    }
  });
});

describe("issue 30: a later day's refund is tied to its session (defect 3)", () => {
  it("the fleet reads the session of a report line's order id from any day, through its index", async () => {
    const fleet = await openFleetDb(":memory:");
    try {
      const pay = line({ at: Date.parse("2026-11-20T10:00:00Z"), amount: 2500 });
      const row: SalesTable = {
        ...sale(pay, "2026-11-20", { refunded: 500 }),
        seq: 1,
        flow: "selection",
        item: 1,
        price: 2500,
        result: "captured",
        approved: 2500,
        vends_ok: 1,
        vends_failed: 0,
        opened_at: pay.at - 1000,
        member_id: null,
        plan_id: null,
      };
      await insertSales(fleet.db, [row]);
      const refund = line({
        at: Date.parse("2026-11-24T09:00:00Z"),
        amount: -500,
        type: "Refund",
        orderId: pay.orderId,
      });
      expect(await loadSales(fleet.db, "2026-11-24", "2026-11-24")).toEqual([]);
      const related = await loadRelated(fleet.db, "2026-11-24", "2026-11-24", [refund]);
      expect(related.map((s) => s.session_id)).toEqual([row.session_id]);
      const input = {
        from: "2026-11-24",
        to: "2026-11-24",
        sales: [],
        lines: [refund],
        transfers: [],
        timeZone: "UTC",
      };
      const r = reconcile({ ...input, related });
      expect(r.clean).toBe(true);
      expect(r.lines).toEqual([
        expect.objectContaining({ class: "refundMatched", session_id: row.session_id, reported: 500 }),
      ]);
      // A refund of an earlier sale the journal never made is still a difference.
      const r2 = reconcile({ ...input, related: related.map((s) => ({ ...s, refunded: 0 })) });
      expect(problems(r2)).toEqual([
        expect.objectContaining({
          class: "refundUnmatched",
          session_id: row.session_id,
          expected: 0,
          reported: 500,
        }),
      ]);
    } finally {
      await fleet.close();
    }
  });
});

describe("issue 30: the reconciliation page with no runs", () => {
  it("says there are no runs yet and how to get one", () => {
    const page = renderRunsPage([]).value;
    expect(page).toContain("No reconciliation runs yet");
    expect(page).toContain("vendd fleet reconcile --from YYYY-MM-DD --to YYYY-MM-DD");
    expect(page).toContain("04:30");
    expect(page).not.toContain("<table");
  });
});
