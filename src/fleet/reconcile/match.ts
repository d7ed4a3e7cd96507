/**
 * Settlement reconciliation, the pure part (issue 17): the fleet's sales rows against the lines and transfers
 * of the transaction report for a day range. No I/O, no clock: maps keyed by order id, one pass over each
 * input (5,000 vends with their fees and refunds, 10,455 report lines: about 65 ms, bench-reconcile.ts).
 *
 * Each report line is tied to a session by the merchant's id of the payment (the order id the unit sent:
 * `externalTransactionId` / `merchantReference`), and to a unit by that session, or, for a line the fleet does
 * not know, by the order id's unit prefix (`<unit>-<epoch>-<seq>`, src/journal nextOrderId) or the payment
 * point (a `points` table: payment point id → unit, for a point that belongs to one unit).
 */
import type { Minor } from "../../core/money.js";
import type { ReportLine } from "../../payment/reporting/client.js";
import { dayOf } from "../context.js";
import { feeLine, type Group, ids, saleLines, sumMinor } from "./saleLines.js";
import { type CurrencyTotals, checkTransfers, Totals } from "./transfers.js";
import {
  type BillingRow,
  LINE_CLASSES,
  type LineClass,
  type MatchInput,
  type ReconLine,
  type TransferTotal,
} from "./types.js";

export { sumMinor } from "./saleLines.js";
export type { CurrencyTotals } from "./transfers.js";
export {
  type BillingRow,
  LINE_CLASSES,
  type LineClass,
  type MatchInput,
  type ReconLine,
  type SaleRow,
  type TransferTotal,
} from "./types.js";

import { DAY_MS } from "../../core/days.js";

/** Classes that mean "reconciles"; a `transfer` line reconciles when its difference is 0. */
const GOOD: ReadonlySet<LineClass> = new Set(["matched", "refundMatched", "fee"]);

export interface ReconResult {
  from: string;
  to: string;
  lines: ReconLine[];
  transfers: TransferTotal[];
  /** Money per currency (never summed across currencies). */
  totals: CurrencyTotals[];
  counts: Record<LineClass, number>;
  clean: boolean;
}

const ORDER_ID = /^(.+)-(\d{10})-(\d+)$/;
/** Drivers whose payments the payment service reports (sim and plan vends move no money through it). */
const PAID_DRIVERS: ReadonlySet<string> = new Set(["v10", "legacy"]);

/** The day before a `YYYY-MM-DD` day. */
export function previousDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
}

/** Report lines grouped by order id (invoices: by issuer and number; lines without one: by their id). */
function groupLines(input: MatchInput): Map<string, Group> {
  const groups = new Map<string, Group>();
  const issuers = new Set<string>();
  for (const b of input.billing ?? []) if (b.point !== undefined) issuers.add(b.point);
  for (const l of input.lines) {
    const key =
      l.orderId === null
        ? `#${l.paymentTransactionId}`
        : issuers.has(l.paymentPointId)
          ? `${l.paymentPointId}#${l.orderId}`
          : l.orderId;
    let g = groups.get(key);
    if (g === undefined) {
      g = { payments: [], refunds: [], fees: [] };
      groups.set(key, g);
    }
    if (l.type === "Payment") g.payments.push(l);
    else if (l.type === "Refund") g.refunds.push(l);
    else g.fees.push(l);
  }
  return groups;
}

/** Reconciles; see the module comment. */
export function reconcile(input: MatchInput): ReconResult {
  const groups = groupLines(input);
  const totals = new Totals();
  const units = new Set<string>();
  for (const s of input.sales) units.add(s.unit_id);
  for (const u of input.points?.values() ?? []) units.add(u);
  const unitOf = (l: ReportLine): string | null => {
    const m = l.orderId === null ? null : ORDER_ID.exec(l.orderId);
    if (m?.[1] !== undefined && units.has(m[1])) return m[1];
    return input.points?.get(l.paymentPointId) ?? null;
  };

  const lines: ReconLine[] = [];
  /** Fees per day, unit and currency: one `fee` line each. */
  const fees = new Map<string, FeeSum>();
  const fee = (day: string, unit: string | null, g: Group): void => {
    for (const f of g.fees) {
      const key = `${day}|${unit ?? ""}|${f.currencyCode}`;
      const e = fees.get(key) ?? { day, unit, currency: f.currencyCode, amount: 0, count: 0 };
      e.amount -= f.amount;
      e.count += 1;
      fees.set(key, e);
      totals.add(f.currencyCode, "fees", -f.amount);
    }
  };

  const seen = new Set<string>();
  const known = new Set<string>();
  for (const [list, related] of [
    [input.sales, false],
    [input.related ?? [], true],
  ] as const) {
    for (const s of list) {
      if (!PAID_DRIVERS.has(s.driver) || known.has(s.order_id)) continue;
      known.add(s.order_id);
      const g = groups.get(s.order_id);
      const quiet = related
        ? s.refundedBefore === undefined || (s.refundedBy ?? s.refunded) === s.refundedBefore
        : s.captured === 0 && (s.refundedBy ?? s.refunded) === 0;
      if (g === undefined && quiet) continue;
      seen.add(s.order_id);
      saleLines(s, g, related, totals, lines);
      if (g !== undefined && input.transactionFee != null) {
        const f = feeLine(s, g, input.transactionFee);
        if (f !== null) lines.push(f);
      }
      if (g !== undefined) fee(related ? dayOfFirst(g, input.timeZone, s.day) : s.day, s.unit_id, g);
    }
  }

  for (const b of input.billing ?? []) {
    const key = b.point === undefined ? b.orderId : `${b.point}#${b.orderId}`;
    const g = groups.get(key);
    seen.add(key);
    lines.push(billingLine(b, g));
    if (g !== undefined) fee(b.day, null, g);
  }

  for (const [key, g] of groups) {
    if (seen.has(key)) continue;
    const first = g.payments[0] ?? g.refunds[0] ?? g.fees[0];
    if (first === undefined) continue;
    const unit = unitOf(first);
    const day = dayOf(first.at, input.timeZone);
    for (const l of g.payments.concat(g.refunds)) {
      totals.add(l.currencyCode, l.type === "Payment" ? "paid" : "refundReported", Math.abs(l.amount));
      lines.push({
        day,
        class: "unknownInFleet",
        unit_id: unit,
        session_id: null,
        order_id: first.orderId,
        reference: l.paymentTransactionId,
        expected: null,
        reported: Math.abs(l.amount),
        currency: l.currencyCode,
        reason: `${l.type} in the report, no session in the fleet`,
      });
    }
    fee(day, unit, g);
  }

  for (const f of fees.values()) lines.push(feeSumLine(f));
  return finish(input, lines, totals);
}

/** Fees of one day, unit and currency. */
interface FeeSum {
  day: string;
  unit: string | null;
  currency: string;
  amount: Minor;
  count: number;
}

/** The one `fee` line of a day, unit and currency. */
function feeSumLine(f: FeeSum): ReconLine {
  return {
    day: f.day,
    class: "fee",
    unit_id: f.unit,
    session_id: null,
    order_id: null,
    reference: null,
    expected: null,
    reported: f.amount,
    currency: f.currency,
    reason: `${f.count} fee line(s)`,
  };
}

/** The transfers checked, the lines counted by class, and whether the period is clean. */
function finish(input: MatchInput, lines: ReconLine[], totals: Totals): ReconResult {
  const transfers = checkTransfers(input, lines, totals);
  const counts = Object.fromEntries(LINE_CLASSES.map((c) => [c, 0])) as Record<LineClass, number>;
  let clean = true;
  for (const l of lines) {
    counts[l.class] += 1;
    if (!GOOD.has(l.class) && l.class !== "transfer") clean = false;
  }
  for (const t of transfers) if (t.difference !== 0) clean = false;
  return { from: input.from, to: input.to, lines, transfers, totals: totals.list(), counts, clean };
}

/** The local day of a group's first line (a later day's lines of an earlier session), else `fallback`. */
function dayOfFirst(g: Group, timeZone: string, fallback: string): string {
  const first = g.payments[0] ?? g.refunds[0] ?? g.fees[0];
  return first === undefined ? fallback : dayOf(first.at, timeZone);
}

function billingLine(b: BillingRow, g: Group | undefined): ReconLine {
  const refund = b.kind === "planRefund";
  const reported = g === undefined ? [] : refund ? g.refunds : g.payments;
  const got = refund ? -sumMinor(reported) : sumMinor(reported);
  const what =
    b.kind === "planCharge"
      ? "plan charge"
      : b.kind === "overage"
        ? "overage payment"
        : b.kind === "planRefund"
          ? "plan refund"
          : `invoice ${b.orderId}`;
  let cls: LineClass = refund ? "refundMatched" : "matched";
  let reason = `${what} of ${b.payer} reported`;
  if (got !== b.amount) {
    cls = refund ? "refundUnmatched" : got === 0 ? "missingInReport" : "amountMismatch";
    reason =
      got === 0
        ? `${what} of ${b.payer}: paid in the fleet, not in the report`
        : `${what} of ${b.payer}: fleet ${b.amount}, report ${got}`;
  }
  return {
    day: b.day,
    class: cls,
    unit_id: null,
    session_id: b.ref,
    order_id: b.orderId,
    reference: ids(reported),
    expected: b.amount,
    reported: got,
    currency: reported[0]?.currencyCode ?? null,
    reason,
  };
}

/** Lines that do not reconcile (everything but matched, refundMatched, fee and transfers without difference). */
export function problems(r: ReconResult): ReconLine[] {
  return r.lines.filter((l) => !GOOD.has(l.class) && !(l.class === "transfer" && l.expected === l.reported));
}
