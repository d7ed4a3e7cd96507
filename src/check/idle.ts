import type { SessionRow } from "../journal/journal.js";
import type { JournalSnapshot } from "../journal/snapshot.js";
import type { LedgerRecord } from "./types.js";

/**
 * The one definition of an idle session: the idle payment a check-in unit on the older interface keeps
 * initiated while it waits for a customer (pos-legacy §9). Open, no vend, no decision, and no money moved
 * for it at the service (by order id or payment id). Where the ledger is not at hand (waiting for recovery
 * to finish), pass none: no movement is then known.
 */
export function isIdleSession(
  s: SessionRow,
  journal: Pick<JournalSnapshot, "vends">,
  ledger: readonly LedgerRecord[] = [],
): boolean {
  if (s.closedAt !== null || s.decision !== null) return false;
  if (journal.vends.some((v) => v.sessionId === s.id)) return false;
  return !ledger.some(
    (e) =>
      e.orderId === s.orderId ||
      (s.paymentId !== null && (e.id === s.paymentId || e.paymentId === s.paymentId)),
  );
}

/** The ids of the idle sessions of a journal snapshot (see `isIdleSession`). */
export function idleSessions(journal: JournalSnapshot, ledger: readonly LedgerRecord[] = []): Set<string> {
  return new Set(journal.sessions.filter((s) => isIdleSession(s, journal, ledger)).map((s) => s.id));
}
