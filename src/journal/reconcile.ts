import type { Minor } from "../core/money.js";
import type { LedgerEntry } from "../emulator/types.js";
import type { SessionRow } from "./journal.js";

export interface Reconciliation {
  consistent: boolean;
  /** One line per disagreement; empty when consistent. */
  problems: string[];
  captured: Minor;
  sessions: number;
}

/**
 * Compares the unit's journal with the payment service's record of money movements (the emulator's ledger,
 * later the transaction report of seed 002). Consistent means: every session is closed and settled; each
 * payment was captured at most once, never both captured and released; a captured session was captured at
 * exactly its decided amount; a reservation of a session that was not captured was released; and the
 * service moved no money for a payment the journal does not know.
 */
export function reconcile(sessions: readonly SessionRow[], ledger: readonly LedgerEntry[]): Reconciliation {
  const problems: string[] = [];
  const byPayment = new Map<string, LedgerEntry[]>();
  for (const e of ledger) {
    if (e.kind === "refunded" && e.paymentId !== null && e.interface === "v10") {
      push(byPayment, e.paymentId, e);
    } else {
      push(byPayment, e.id, e);
    }
  }
  const known = new Set<string>();
  let captured = 0;
  for (const s of sessions) {
    const label = `session ${s.orderId}`;
    if (s.closedAt === null || s.result === "unsettled") {
      problems.push(`${label} is not settled (${s.result ?? "open"})`);
    }
    if (s.paymentId === null) continue;
    known.add(s.paymentId);
    const entries = byPayment.get(s.paymentId) ?? [];
    const count = (k: LedgerEntry["kind"]) => entries.filter((e) => e.kind === k).length;
    const sum = (k: LedgerEntry["kind"]) =>
      entries.filter((e) => e.kind === k).reduce((a, e) => a + e.amount, 0);
    const held = count("reserved");
    const paid = count("paid");
    const caps = count("captured");
    const released = count("cancelled") + count("expired");
    const refunded = sum("refunded");
    if (held > 1 || paid > 1) problems.push(`${label}: reserved ${held + paid} times`);
    if (caps > 1) problems.push(`${label}: captured ${caps} times`);
    if (released > 1) problems.push(`${label}: released ${released} times`);
    if (caps > 0 && released > 0) problems.push(`${label}: both captured and released`);
    if (s.result === "captured") {
      const expected = s.decision?.amount ?? s.price;
      const moved = paid > 0 ? sum("paid") - refunded : sum("captured");
      if (moved !== expected) problems.push(`${label}: captured ${moved}, journal decided ${expected}`);
      captured += moved;
    } else if (s.result === "cancelled" || s.result === "denied") {
      if (caps > 0) problems.push(`${label}: ${s.result} in the journal but captured at the service`);
      if (held > 0 && released === 0) problems.push(`${label}: reservation was never released`);
      if (paid > 0 && refunded !== sum("paid"))
        problems.push(`${label}: direct payment not refunded in full`);
    }
  }
  for (const id of byPayment.keys()) {
    if (!known.has(id)) problems.push(`the service moved money for ${id}, which the journal does not know`);
  }
  return { consistent: problems.length === 0, problems, captured, sessions: sessions.length };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
