import { decideSettlement } from "../engine/settlement.js";
import { PLAN_DRIVER, type SessionRow, type SettleAction } from "../journal/journal.js";
import type { VendView } from "../journal/snapshot.js";
import type { LedgerRecord } from "./types.js";

/** The ledger grouped by payment: a refund is filed under the payment it refunds, never under its own id. */
export function byPayment(ledger: readonly LedgerRecord[]): Map<string, LedgerRecord[]> {
  const map = new Map<string, LedgerRecord[]>();
  for (const e of ledger) {
    const key = e.kind === "refunded" && e.paymentId !== null ? e.paymentId : e.id;
    const list = map.get(key);
    if (list) list.push(e);
    else map.set(key, [e]);
  }
  return map;
}

/** Counts and sums of one payment's movements. */
function tally(entries: readonly LedgerRecord[]) {
  const count = (k: LedgerRecord["kind"]) => entries.filter((e) => e.kind === k).length;
  const sum = (k: LedgerRecord["kind"]) =>
    entries.filter((e) => e.kind === k).reduce((a, e) => a + e.amount, 0);
  return {
    held: count("reserved"),
    paid: count("paid"),
    captures: count("captured"),
    released: count("cancelled") + count("expired"),
    refunds: count("refunded"),
    paidSum: sum("paid"),
    capturedSum: sum("captured"),
    refundedSum: sum("refunded"),
  };
}

/**
 * Per payment at the service, whoever it belongs to: reserved or paid once, captured at most once, released
 * at most once, never both captured and released, never left reserved; refunded at most once (the unit
 * sends one refund per payment), only after money moved, and never more than moved.
 */
export function paymentProblems(payments: ReadonlyMap<string, readonly LedgerRecord[]>): string[] {
  const problems: string[] = [];
  for (const [id, entries] of payments) {
    const t = tally(entries);
    const label = `payment ${id} (${entries[0]?.orderId ?? "?"})`;
    if (t.held > 1 || t.paid > 1) problems.push(`${label} reserved ${t.held + t.paid} times`);
    if (t.captures > 1) problems.push(`${label} captured ${t.captures} times`);
    if (t.released > 1) problems.push(`${label} released ${t.released} times`);
    if (t.captures > 0 && t.released > 0) problems.push(`${label} both captured and released`);
    if (t.held > 0 && t.captures + t.released === 0) problems.push(`${label} left reserved`);
    if (t.refunds > 1) problems.push(`${label} refunded ${t.refunds} times`);
    if (t.refunds > 0 && t.captures + t.paid === 0) problems.push(`${label} refunded but never captured`);
    if (t.refundedSum > t.capturedSum + t.paidSum)
      problems.push(`${label} refunded ${t.refundedSum}, more than the ${t.capturedSum + t.paidSum} it took`);
  }
  return problems;
}

/**
 * One session against its payment's movements and the money policy: settled; a captured session was charged
 * exactly what `decideSettlement` says for its journaled vends under `policy`, and exactly its decided
 * amount at the service; a released session was charged nothing and its money went back. Returns the
 * problems and the amount the service kept.
 */
export function sessionProblems(
  s: SessionRow,
  vends: readonly VendView[],
  entries: readonly LedgerRecord[],
  policy: SettleAction,
): { problems: string[]; kept: number } {
  const problems: string[] = [];
  const label = `session ${s.orderId}`;
  if (s.closedAt === null || s.result === "unsettled")
    problems.push(`${label} is not settled (${s.result ?? "open"})`);
  // A plan vend (issue 18) moves no money: settled, and nothing at the service, is all there is to check.
  if (s.driver === PLAN_DRIVER) {
    if (entries.length > 0) problems.push(`${label}: a plan vend with payment movements`);
    return { problems, kept: 0 };
  }
  const t = tally(entries);
  const owed = decideSettlement({
    price: s.price,
    vends: vends.map((v) => ({ amount: v.price, outcome: v.outcome })),
    mode: t.paid > 0 ? "payment" : "reservation",
    policy,
  });
  const implied = owed.action === "capture" ? owed.amount : 0;
  let kept = 0;
  if (s.result === "captured") {
    const decided = s.decision?.amount ?? s.price;
    if (decided !== implied)
      problems.push(`${label}: captured ${decided}, vends imply ${implied} (policy ${policy})`);
    kept = t.paid > 0 ? t.paidSum - t.refundedSum : t.capturedSum - t.refundedSum;
    if (s.paymentId !== null && kept !== decided)
      problems.push(`${label}: the service kept ${kept}, journal decided ${decided}`);
  } else if (s.result === "cancelled" || s.result === "denied") {
    if (implied > 0)
      problems.push(`${label}: ${s.result}, but vends imply a charge of ${implied} (policy ${policy})`);
    if (t.captures > 0) problems.push(`${label}: ${s.result} in the journal but captured at the service`);
    if (t.held > 0 && t.released === 0) problems.push(`${label}: reservation was never released`);
    if (t.paid > 0 && t.refundedSum !== t.paidSum)
      problems.push(`${label}: direct payment not refunded in full`);
  }
  return { problems, kept };
}
