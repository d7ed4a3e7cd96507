/** The shapes of the sales the dashboard reads (sales/store.ts reads them, views.ts renders them). */

export interface Totals {
  currency: string;
  /** Sessions that captured money. */
  sales: number;
  sessions: number;
  /** Minor units, exact (BigInt). */
  captured: bigint;
  refunded: bigint;
  /** captured − refunded. */
  net: bigint;
  vendsOk: number;
  vendsFailed: number;
}

export interface SalesFilter {
  from: string;
  to: string;
  unit?: string | undefined;
}

export type SalesGroup = "day" | "unit" | "item";

export interface SalesRow extends Totals {
  /** The day, unit id or item number (as text) of the group. */
  key: string;
}

/** Net sales per day and currency over `days` days ending today, zero-filled: what the charts draw. */
export interface DailySeries {
  days: string[];
  series: { currency: string; decimals: number; net: number[]; sales: number[] }[];
}

/** A unit as the sales page's filter shows it. */
export interface UnitChoice {
  id: string;
  label: string;
}
