import type { Approval } from "../../drivers/vmc/simulator/index.js";
import type { LedgerEntry } from "../emulator/types.js";
import { reconcile } from "../journal/reconcile.js";
import type { VendRecord } from "./actors.js";
import type { JournalSnapshot, VendView } from "./journalView.js";

/** Everything the exactly-once check compares: the unit's journal, the service's ledger, the machine's view. */
export interface InvariantInput {
  journal: JournalSnapshot;
  /** The unit's own money movements at the service. */
  ledger: readonly LedgerEntry[];
  /** Approvals the VMC received from this unit, in order. */
  approvals: readonly Approval[];
  /** What the simulated VMC did with each vend request (the parent's record). */
  vends: readonly VendRecord[];
  /** Protocol violations the VMC simulator saw (an approval of another amount, …). */
  violations: readonly string[];
  /**
   * The unit keeps an idle payment initiated (check-in first, older interface): its open session, with no
   * vend, no decision and no money moved, is the unit's rest state, not a lost session.
   */
  idlePayment?: boolean;
}

/** The result: readable problems (empty when every invariant holds) and counts. */
export interface InvariantReport {
  consistent: boolean;
  problems: string[];
  captured: number;
  cancelled: number;
  denied: number;
}

/**
 * The exactly-once invariants after the last recovery (reliability.md §7 rung 3): integrity ok; no
 * payment captured twice, both captured and released, or left reserved; every approval the VMC received is
 * backed by a durable vend row of a session with a payment reference; each captured amount equals what the
 * policy implies from the journaled vends (delivered + outcome unknown, `unknownOutcome: capture`, MDB
 * §7.4.7); the journal's outcomes agree with what the VMC reported; `reconcile` finds the journal and the
 * ledger consistent.
 */
export function checkInvariants(input: InvariantInput): InvariantReport {
  const { journal, ledger } = input;
  const problems: string[] = [];
  if (journal.integrity !== "ok") problems.push(`integrity_check: ${journal.integrity}`);
  for (const v of input.violations) problems.push(`VMC protocol violation: ${v}`);
  problems.push(...ledgerProblems(ledger));
  problems.push(...approvalProblems(input));
  problems.push(...amountProblems(journal));
  const idle = input.idlePayment ? idleSessions(journal, ledger) : new Set<string>();
  problems.push(
    ...reconcile(
      journal.sessions.filter((s) => !idle.has(s.id)),
      ledger,
    ).problems,
  );
  const count = (r: string) => journal.sessions.filter((s) => s.result === r).length;
  return {
    consistent: problems.length === 0,
    problems,
    captured: count("captured"),
    cancelled: count("cancelled"),
    denied: count("denied"),
  };
}

/** Open sessions with no vend, no decision and no money moved: idle payments waiting for a check-in. */
function idleSessions(journal: JournalSnapshot, ledger: readonly LedgerEntry[]): Set<string> {
  const vended = new Set(journal.vends.map((v) => v.sessionId));
  const moved = new Set(ledger.flatMap((e) => [e.id, e.orderId]));
  const idle = journal.sessions.filter(
    (s) =>
      s.closedAt === null &&
      s.decision === null &&
      !vended.has(s.id) &&
      !moved.has(s.orderId) &&
      (s.paymentId === null || !moved.has(s.paymentId)),
  );
  return new Set(idle.map((s) => s.id));
}

/** Per payment at the service: at most one capture, never captured and released, never left reserved. */
function ledgerProblems(ledger: readonly LedgerEntry[]): string[] {
  const problems: string[] = [];
  const byId = new Map<string, LedgerEntry[]>();
  for (const e of ledger) {
    if (e.kind === "refunded") continue;
    byId.set(e.id, [...(byId.get(e.id) ?? []), e]);
  }
  for (const [id, entries] of byId) {
    const n = (k: LedgerEntry["kind"]) => entries.filter((e) => e.kind === k).length;
    const order = entries[0]?.orderId ?? "?";
    if (n("captured") > 1) problems.push(`payment ${id} (${order}) captured ${n("captured")} times`);
    if (n("captured") > 0 && n("cancelled") + n("expired") > 0)
      problems.push(`payment ${id} (${order}) both captured and released`);
    if (n("reserved") > 0 && n("captured") + n("cancelled") + n("expired") === 0)
      problems.push(`payment ${id} (${order}) left reserved`);
  }
  return problems;
}

/**
 * Each approval the VMC received maps, in order, onto a journaled vend row (same item and price) of a
 * session with a payment reference; the VMC's reported outcome agrees with the row's.
 */
function approvalProblems(input: InvariantInput): string[] {
  const problems: string[] = [];
  const { sessions, vends } = input.journal;
  const paymentOf = new Map(sessions.map((s) => [s.id, s.paymentId]));
  const reports = [...input.vends.filter((v) => v.outcome !== "denied" && v.outcome !== "skipped")];
  let next = 0;
  for (const a of input.approvals) {
    let row: VendView | undefined;
    while (next < vends.length && row === undefined) {
      const v = vends[next++];
      if (v !== undefined && v.item === a.item && v.price === a.price) row = v;
    }
    if (row === undefined) {
      problems.push(`approval of item ${a.item} at ${a.price} has no journaled vend row before it`);
      continue;
    }
    if (a.amount !== a.price) problems.push(`approved ${a.amount} for a request of ${a.price}`);
    if (!paymentOf.get(row.sessionId)) problems.push(`approved vend ${row.id} has no payment reference`);
    const at = reports.findIndex((r) => r.item === a.item && r.price === a.price);
    const report = at < 0 ? undefined : reports.splice(at, 1)[0];
    if (report === undefined) continue;
    if (report.outcome === "success" && (row.outcome === "failure" || row.outcome === "cancelled"))
      problems.push(`vend ${row.id} at ${row.price} was delivered but journaled ${row.outcome}`);
    if (report.outcome === "failure" && row.outcome === "success")
      problems.push(`vend ${row.id} at ${row.price} failed but journaled success`);
  }
  return problems;
}

/** Captured amounts equal delivered + unknown-outcome vends; released sessions had nothing to charge. */
function amountProblems(journal: JournalSnapshot): string[] {
  const problems: string[] = [];
  const charge = new Map<string, number>();
  for (const v of journal.vends) {
    const charged = v.outcome === null || v.outcome === "success" || v.outcome === "unknown";
    charge.set(v.sessionId, (charge.get(v.sessionId) ?? 0) + (charged ? v.price : 0));
  }
  for (const s of journal.sessions) {
    const expected = charge.get(s.id) ?? 0;
    if (s.result === "captured" && s.decision?.amount !== expected)
      problems.push(`session ${s.orderId}: captured ${s.decision?.amount}, vends imply ${expected}`);
    if ((s.result === "cancelled" || s.result === "denied") && expected > 0)
      problems.push(`session ${s.orderId}: ${s.result}, but vends imply a charge of ${expected}`);
  }
  return problems;
}
