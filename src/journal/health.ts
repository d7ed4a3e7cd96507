import { existsSync } from "node:fs";
import { checkAgainstOwner, inspectJournal } from "./inspect.js";
import { JournalError, type JournalProblem } from "./journal.js";
import { readOwner } from "./owner.js";
import { classifyJournalError, journalProblem, probePath } from "./problems.js";
import { openJournalView } from "./view.js";

/** What `vendd doctor` reports about the journal. */
export type JournalHealth =
  | { kind: "fresh" }
  | { kind: "ok"; unresolved: number; conflicts: number; flagged: number }
  | { kind: "problem"; problem: JournalProblem };

/**
 * The journal as the daemon's start check would judge it, plus what needs a person, all read-only (safe
 * while the daemon runs; it never takes the lock): the full `integrity_check`, the schema, the order
 * sequence against the owner sidecar's high-water mark, then the sessions left unresolved, in conflict with
 * the service, and flagged for review. A missing file is "fresh" unless its directory could not hold one or
 * the sidecar says a journal existed ("data lost").
 */
export function journalHealth(path: string): JournalHealth {
  try {
    if (!existsSync(path)) {
      const found = probePath(path);
      if (found !== null && found.cause !== "not writable")
        return { kind: "problem", problem: journalProblem(path, found.cause, found.detail) };
    }
    const state = inspectJournal(path, { thorough: true });
    checkAgainstOwner(path, state, readOwner(path));
    if (!state.exists) return { kind: "fresh" };
    const view = openJournalView(path);
    try {
      const unresolved = view.unresolved(1_000_000);
      return {
        kind: "ok",
        unresolved: unresolved.length,
        conflicts: unresolved.filter((s) => s.conflict).length,
        flagged: view.flagged(1_000_000).length,
      };
    } finally {
      view.close();
    }
  } catch (err) {
    const refusal = err instanceof JournalError ? err : classifyJournalError(err, path);
    if (refusal.problem === undefined) throw err;
    return { kind: "problem", problem: refusal.problem };
  }
}
