/** The rows the reconciliation pages show: what store.ts reads and views.ts renders. */
import type { TransferTotal } from "./match.js";

export interface RunSummary {
  id: number;
  runAt: number;
  from: string;
  to: string;
  clean: boolean;
  counts: Record<string, number>;
  transfers: TransferTotal[];
}

/** One sales day of a run in one currency (money is never summed across currencies). */
export interface DayRow {
  day: string;
  /** The transfers' currency; "" for a day without transfers (or a run from before issue 30). */
  currency: string;
  /** Transfers made for the day's sales (dated the next day). */
  transfers: TransferTotal[];
  expected: number;
  received: number;
  difference: number;
  lines: number;
  problems: number;
}

export interface UnitRow {
  unit: string | null;
  lines: number;
  problems: number;
}

export interface LineFilter {
  day?: string;
  unit?: string;
  /** Every line, not only those that do not reconcile. */
  all?: boolean;
  limit?: number;
}

/** Line classes that are no difference (the pages show the others). */
export const GOOD = new Set<string>(["matched", "refundMatched", "fee", "transfer"]);
