import type { EmuClock, Ledger, LedgerEntry } from "./types.js";

/**
 * The in-memory ledger of every money movement (types.ts Ledger). Entries are never purged: the exactly-once
 * tests compare it with the unit's journal, so it must outlive the payment records it describes.
 *
 * Entries are appended in time order (`at` never goes below the previous entry's, even if the real-time
 * source steps back), so a time range is found by binary search (`indexAt`) rather than a scan: transaction
 * reporting reads a day of 100,000 entries this way.
 */
export function createLedger(clock: Pick<EmuClock, "now">): Ledger {
  const list: LedgerEntry[] = [];
  return {
    record(entry) {
      const last = list[list.length - 1];
      const now = clock.now();
      const full: LedgerEntry = {
        ...entry,
        seq: list.length + 1,
        at: last !== undefined && last.at > now ? last.at : now,
      };
      list.push(full);
      return full;
    },
    entries() {
      return list;
    },
    indexAt(time) {
      return lowerBound(list, time, (e) => e.at);
    },
  };
}

/** The first index whose key is >= `value` in a list sorted by that key (its length when there is none). */
export function lowerBound<T>(list: readonly T[], value: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const item = list[mid] as T;
    if (key(item) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
