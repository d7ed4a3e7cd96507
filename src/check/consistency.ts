import { idleSessions } from "./idle.js";
import { byPayment, paymentProblems, sessionProblems } from "./money.js";
import type { ConsistencyInput, ConsistencyReport } from "./types.js";
import { vmcProblems } from "./vmc.js";

export { idleSessions, isIdleSession } from "./idle.js";
export type * from "./types.js";

/**
 * The one consistency checker (reliability.md §7 rung 3), used by the demo, the chaos rig, the crash tests
 * and the tests. It compares the unit's journal, the payment service's ledger and, where there is one, the
 * VMC's record, matching by session and payment id (never by item or price):
 * - the journal passes `integrity_check`; every session (but an idle one, see `isIdleSession`) is settled;
 * - per payment: reserved once, captured at most once, never both captured and released, never left
 *   reserved, refunded at most once, never without a capture, never more than was taken;
 * - per session: captured exactly what `decideSettlement` says for its journaled vends under `policy`, and
 *   exactly its decided amount at the service; a released session was charged nothing and its money went
 *   back; the service moved no money for a payment the journal does not know;
 * - VMC → journal: every approval and every vend the machine reports has its journal row, in order, with
 *   the outcome the machine reported (see `vmcProblems`).
 */
export function checkConsistency(input: ConsistencyInput): ConsistencyReport {
  const { journal, ledger, policy } = input;
  const problems: string[] = [];
  if (journal.integrity !== "ok") problems.push(`integrity_check: ${journal.integrity}`);
  const idle = input.idlePayment ? idleSessions(journal, ledger) : new Set<string>();
  const sessions = journal.sessions.filter((s) => !idle.has(s.id));
  const payments = byPayment(ledger);
  problems.push(...paymentProblems(payments));
  const known = new Set<string>();
  let capturedAmount = 0;
  for (const s of sessions) {
    if (s.paymentId !== null) known.add(s.paymentId);
    const vends = journal.vends.filter((v) => v.sessionId === s.id);
    const entries = s.paymentId === null ? [] : (payments.get(s.paymentId) ?? []);
    const r = sessionProblems(s, vends, entries, policy);
    problems.push(...r.problems);
    capturedAmount += r.kept;
  }
  for (const id of payments.keys()) {
    if (!known.has(id)) problems.push(`the service moved money for ${id}, which the journal does not know`);
  }
  if (input.vmc !== undefined) problems.push(...vmcProblems(sessions, journal.vends, input.vmc));
  const count = (r: string) => sessions.filter((s) => s.result === r).length;
  return {
    consistent: problems.length === 0,
    problems,
    sessions: sessions.length,
    captured: count("captured"),
    cancelled: count("cancelled"),
    denied: count("denied"),
    capturedAmount,
  };
}
