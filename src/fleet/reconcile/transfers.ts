/**
 * Transfers and per-currency totals of a reconciliation (issue 30). A transfer is checked against its own
 * contents (seed 002 §Reporting: transfer contents v1/v2): the amount received must equal the sum of the
 * lines the service says it covers, whatever local day or time zone those lines fell in. Each content line
 * is tied to its session by order id; the journal's view of each line is compared once, on the line itself
 * (match.ts), so one wrong line is one difference, not also a transfer difference. Money is summed as
 * BigInt and never across currencies.
 */

import { DAY_MS } from "../../core/days.js";
import type { Minor } from "../../core/money.js";
import type { ReportLine } from "../../payment/reporting/client.js";
import { dayOf } from "../context.js";
import { checkContents } from "./contents.js";
import type { MatchInput, ReconLine, TransferTotal } from "./types.js";

/** Money of one currency in a reconciliation (minor units; refunds and fees as positive amounts). */
export interface CurrencyTotals {
  currency: string;
  /** What the journal captured / refunded (sessions of the range). */
  captured: Minor;
  refunded: Minor;
  /** What the report's lines of the range paid / refunded, and its fees. */
  paid: Minor;
  refundReported: Minor;
  fees: Minor;
  /** What the transfers dated in the range moved. */
  transferred: Minor;
}

type Field = Exclude<keyof CurrencyTotals, "currency">;
const FIELDS: readonly Field[] = ["captured", "refunded", "paid", "refundReported", "fees", "transferred"];

/** Per-currency sums, kept as BigInt. */
export class Totals {
  private readonly by = new Map<string, Record<Field, bigint>>();

  add(currency: string, field: Field, amount: Minor): void {
    let t = this.by.get(currency);
    if (t === undefined) {
      t = { captured: 0n, refunded: 0n, paid: 0n, refundReported: 0n, fees: 0n, transferred: 0n };
      this.by.set(currency, t);
    }
    t[field] += BigInt(amount);
  }

  list(): CurrencyTotals[] {
    return [...this.by.keys()].sort().map((currency) => {
      const t = this.by.get(currency);
      const out = { currency } as CurrencyTotals;
      for (const f of FIELDS) out[f] = Number(t?.[f] ?? 0n);
      return out;
    });
  }
}

/** The day before a `YYYY-MM-DD` day. */
function previousDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
}

/**
 * One `transfer` line and total per transfer; content lines of the range's days that no session, plan or
 * invoice of the fleet carries and that the range's lines did not list are added as `unknownInFleet`.
 */
export function checkTransfers(input: MatchInput, lines: ReconLine[], totals: Totals): TransferTotal[] {
  const knownOrders = new Set<string>();
  for (const s of input.sales) knownOrders.add(s.order_id);
  for (const s of input.related ?? []) knownOrders.add(s.order_id);
  for (const b of input.billing ?? []) knownOrders.add(b.orderId);
  const listed = new Set<string>();
  for (const l of input.lines) listed.add(l.paymentTransactionId);

  const out: TransferTotal[] = [];
  for (const t of input.transfers) {
    const contents: readonly ReportLine[] = t.contents ?? [];
    let expected = 0n;
    let foreign = 0;
    for (const c of contents) {
      if (c.currencyCode !== t.currencyCode) {
        foreign += 1;
        continue;
      }
      expected += BigInt(c.amount);
      if (c.type !== "Payment" && c.type !== "Refund") continue;
      if (c.orderId !== null && knownOrders.has(c.orderId)) continue;
      if (listed.has(c.paymentTransactionId)) continue;
      const day = dayOf(c.at, input.timeZone);
      if (day < input.from || day > input.to) continue; // another day's run reports it
      listed.add(c.paymentTransactionId);
      lines.push({
        day,
        class: "unknownInFleet",
        unit_id: input.points?.get(c.paymentPointId) ?? null,
        session_id: null,
        order_id: c.orderId,
        reference: c.paymentTransactionId,
        expected: null,
        reported: Math.abs(c.amount),
        currency: c.currencyCode,
        reason: `${c.type} in transfer ${t.transferReference}, no session in the fleet`,
      });
    }
    checkContents(input, t, contents, lines);
    const exp = Number(expected);
    const difference = Number(BigInt(t.amount) - expected);
    totals.add(t.currencyCode, "transferred", t.amount);
    out.push({
      paymentPointId: t.paymentPointId,
      reference: t.transferReference,
      date: t.transferReferenceDate,
      currency: t.currencyCode,
      expected: exp,
      received: t.amount,
      difference,
    });
    const what =
      t.contents === undefined
        ? "contents not read"
        : `${contents.length} line(s)${foreign > 0 ? `, ${foreign} in another currency than the transfer` : ""}`;
    lines.push({
      // The sales day it covers: a day's transfer is dated the next day (seed 002).
      day: previousDay(t.transferReferenceDate),
      class: "transfer",
      unit_id: input.points?.get(t.paymentPointId) ?? null,
      session_id: null,
      order_id: null,
      reference: t.transferReference,
      expected: exp,
      reported: t.amount,
      currency: t.currencyCode,
      reason:
        difference === 0 && foreign === 0
          ? `transfer of ${t.transferReferenceDate} equals its contents (${what})`
          : `transfer of ${t.transferReferenceDate}: received − contents = ${difference} (${what})`,
    });
  }
  return out;
}
