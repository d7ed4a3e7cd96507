import type { Clock } from "../core/clock.js";
import { openSqliteJournal, type SqliteJournal, type SqliteJournalOptions } from "./sqlite.js";

/** Where the journal is and how it is kept (plain data, from src/config/seams.ts). */
export type JournalOptions = Omit<SqliteJournalOptions, "clock">;

/** The journal's collaborators. */
export interface JournalDeps {
  clock: Clock;
}

/**
 * Opens the journal in the shape of every seam factory, `create<Seam>(options, deps)`. There is one
 * implementation (SQLite), so the options carry no `kind`.
 */
export function createJournal(options: JournalOptions, deps: JournalDeps): SqliteJournal {
  return openSqliteJournal({ ...options, clock: deps.clock });
}
