import { isIdleSession } from "../check/consistency.js";
import { readJournal } from "../journal/snapshot.js";

export { type IntentView, type JournalSnapshot, readJournal, type VendView } from "../journal/snapshot.js";

/**
 * Sessions not closed, or closed `unsettled` (what recovery must still resolve); 0 for a fresh journal.
 * `exceptIdle` leaves out the idle session (`isIdleSession`, the checker's one definition): the idle payment
 * a check-in unit on the older interface keeps initiated while it waits (pos-legacy §9), open by design.
 */
export function unresolvedCount(path: string, exceptIdle = false): number {
  const snap = readJournal(path, { integrity: false });
  return snap.sessions.filter(
    (s) => (s.closedAt === null || s.result === "unsettled") && !(exceptIdle && isIdleSession(s, snap)),
  ).length;
}
