import type { EmuClock, Ledger, LedgerEntry } from "./types.js";

/**
 * The in-memory ledger of every money movement (types.ts Ledger). Entries are never purged: the exactly-once
 * tests compare it with the unit's journal, so it must outlive the payment records it describes.
 */
export function createLedger(clock: Pick<EmuClock, "now">): Ledger {
  const list: LedgerEntry[] = [];
  return {
    record(entry) {
      const full: LedgerEntry = { ...entry, seq: list.length + 1, at: clock.now() };
      list.push(full);
      return full;
    },
    entries() {
      return list;
    },
  };
}
