/**
 * One session's report lines against its journal (match.ts): payments against what was captured, refunds
 * against what was refunded, a line in another currency than its sale as a class of its own (issue 30).
 */
import type { Minor } from "../../core/money.js";
import type { ReportLine } from "../../payment/reporting/client.js";
import type { FeeAgreement } from "./settings.js";
import type { Totals } from "./transfers.js";
import type { LineClass, ReconLine, SaleRow } from "./types.js";

/** A session's (or order's) report lines by type. */
export interface Group {
  payments: ReportLine[];
  refunds: ReportLine[];
  fees: ReportLine[];
}

/** Sum of minor units, added as BigInt (exact past 2^53; issue 30). */
export function sumMinor(lines: readonly { amount: Minor }[]): Minor {
  let s = 0n;
  for (const l of lines) s += BigInt(l.amount);
  return Number(s);
}

export function ids(lines: readonly ReportLine[]): string | null {
  return lines.length === 0 ? null : lines.map((l) => l.paymentTransactionId).join(" ");
}

/** What one session's lines say against the journal; `related`: a session outside the range. */
export function saleLines(
  s: SaleRow,
  g: Group | undefined,
  related: boolean,
  totals: Totals,
  out: ReconLine[],
): void {
  const line = (
    cls: LineClass,
    reference: string | null,
    expected: Minor,
    reported: Minor,
    currency: string,
    reason: string,
  ): ReconLine => ({
    day: s.day,
    class: cls,
    unit_id: s.unit_id,
    session_id: s.session_id,
    order_id: s.order_id,
    reference,
    expected,
    reported,
    currency,
    reason,
  });
  const payments = g?.payments ?? [];
  const refunds = g?.refunds ?? [];
  const foreign = payments.concat(refunds).filter((l) => l.currencyCode !== s.currency);
  if (foreign.length > 0) {
    // A line in another currency than its sale is its own class: its amounts are not comparable.
    const codes = [...new Set(foreign.map((l) => l.currencyCode))].join(", ");
    const reported = sumMinor(foreign.map((l) => ({ amount: Math.abs(l.amount) })));
    out.push(
      line(
        "currencyMismatch",
        ids(foreign),
        s.captured,
        reported,
        foreign[0]?.currencyCode ?? s.currency,
        `report in ${codes}, journal in ${s.currency}`,
      ),
    );
    return;
  }
  const paid = sumMinor(payments);
  if (!related) totals.add(s.currency, "captured", s.captured);
  totals.add(s.currency, "paid", paid);
  if (related ? paid !== 0 : s.captured > 0 || paid !== 0) {
    let cls: LineClass = "matched";
    let reason = "captured amount reported";
    /** What the line shows as reported: the range's payments, and for an earlier session those before. */
    let shown = paid;
    if (related) {
      // Only this range's lines of a session of another day: they must fit what the journal captured.
      // Earlier days' lines count too: a second capture made today of a sale paid before is paid twice.
      const before = s.paidBefore ?? 0;
      reason = "later capture of an earlier session, within what the journal captured";
      if (before + paid > s.captured) {
        cls = "amountMismatch";
        reason =
          before > 0
            ? `session of ${s.day} paid again: ${paid} on this day after ${before} before it, journal captured ${s.captured} in all (the customer paid twice)`
            : `later capture of session of ${s.day}: report paid ${paid}, journal captured ${s.captured} in all`;
      }
      shown = before + paid;
    } else if (paid === 0) {
      cls = "missingInReport";
      reason = "captured in the journal, no payment in the report";
    } else if (paid !== s.captured) {
      cls = "amountMismatch";
      reason =
        payments.length > 1 && paid > s.captured
          ? `double capture: ${payments.length} payment lines of ${paid} in all, journal captured ${s.captured}`
          : `journal captured ${s.captured}, report paid ${paid}`;
    }
    out.push(line(cls, ids(payments), s.captured, shown, s.currency, reason));
  }
  const refunded = -sumMinor(refunds);
  // What the journal refunded in the range: by its end (an in-range session), or within it (an earlier one).
  const by = s.refundedBy ?? s.refunded;
  const inRange = related ? (s.refundedBefore === undefined ? null : by - s.refundedBefore) : by;
  const journalRefunded = inRange ?? s.refunded;
  totals.add(s.currency, "refunded", inRange ?? 0);
  totals.add(s.currency, "refundReported", refunded);
  if (related ? refunded !== 0 || (inRange ?? 0) > 0 : journalRefunded > 0 || refunded !== 0) {
    let cls: LineClass = "refundMatched";
    let reason = related ? `refund of a session of ${s.day}, in the journal` : "refund reported";
    const wrong = related && (inRange === null ? refunded > s.refunded : refunded !== inRange);
    if (wrong) {
      cls = "refundUnmatched";
      reason =
        journalRefunded === 0
          ? `refund of a session of ${s.day} the journal does not hold`
          : `refund of a session of ${s.day}: report refunded ${refunded}, journal ${journalRefunded}`;
    } else if (!related && refunded !== journalRefunded) {
      cls = "refundUnmatched";
      if (refunded === 0) reason = "refunded in the journal, no refund in the report";
      else if (journalRefunded === 0) reason = "refund in the report, not in the journal";
      else if (refunds.length > 1 && refunded > journalRefunded)
        reason = `double refund: ${refunds.length} refund lines of ${refunded} in all, journal refunded ${journalRefunded}`;
      else reason = `journal refunded ${journalRefunded}, report refunded ${refunded}`;
    }
    out.push(line(cls, ids(refunds), journalRefunded, refunded, s.currency, reason));
  }
}

/** The agreed fee of a payment: `basisPoints` of it, rounded half up to the minor unit. */
export function agreedFee(amount: Minor, basisPoints: number): Minor {
  return Number((BigInt(amount) * BigInt(basisPoints) + 5000n) / 10_000n);
}

/**
 * A session's TransactionFee lines against the agreed fee of its payments: null when they agree, or when
 * the report shows no fee for it (fees the merchant has invoiced are neither deducted nor shown, seed 002).
 */
export function feeLine(s: SaleRow, g: Group, agreement: FeeAgreement): ReconLine | null {
  const fees = g.fees.filter((f) => f.type === "TransactionFee");
  if (fees.length === 0) return null;
  let expected = 0n;
  for (const p of g.payments)
    expected += BigInt(agreedFee(p.amount, agreement.points.get(p.paymentPointId) ?? agreement.basisPoints));
  const reported = -sumMinor(fees);
  if (BigInt(reported) === expected) return null;
  return {
    day: s.day,
    class: "feeMismatch",
    unit_id: s.unit_id,
    session_id: s.session_id,
    order_id: s.order_id,
    reference: ids(fees),
    expected: Number(expected),
    reported,
    currency: fees[0]?.currencyCode ?? s.currency,
    reason: `fee ${reported} reported, ${Number(expected)} agreed`,
  };
}
