/**
 * The since-initialisation counters of one DEX read that the three-way reconciliation uses, in the
 * currency's minor units (converted from the file's ID401 decimals). Interval ("since last reset") counters
 * are never used: a read in AUTO mode resets them (dex.md §5).
 */

import type { Minor } from "../../src/core/money.js";
import { type EvaDtsReport, toMinor } from "./evadts.js";

export interface CountValue {
  count: number;
  value: Minor;
}

export interface DexCounters {
  /** VA101/VA102: all paid vends. */
  paid: CountValue | null;
  /** DA201/DA202 (+ DB2): the cashless devices' sales, as the machine counted them. */
  cashless: CountValue | null;
  /** CA201/CA202: cash sales. */
  cash: CountValue | null;
  /** TA201/TA202: token sales. */
  tokens: CountValue | null;
  /** CA305 − CA403 since init: cash kept by the machine, when the file has both. */
  cashNet: Minor | null;
  /** PA2 per selection (since init). */
  products: { selection: string; name: string | null; count: number; value: Minor }[];
  /** What names the machine and its board; a change means a replaced board (new baseline). */
  identity: { machine: string | null; board: string | null; initialised: string | null };
  currency: string | null;
}

/** Reads the counters; `minorDigits` is the currency's (2 for EUR, DKK). A value that loses a fraction is null. */
export function countersOf(r: EvaDtsReport, minorDigits = 2): DexCounters {
  const minor = (v: number | null | undefined): Minor | null =>
    v === null || v === undefined ? null : toMinor(v, r.decimals, minorDigits);
  const cv = (value: number | null | undefined, count: number | null | undefined): CountValue | null => {
    const m = minor(value);
    return m === null || count === null || count === undefined ? null : { count, value: m };
  };
  const db = r.cashless2.sales;
  const da = cv(r.cashless1.sales?.valueInit, r.cashless1.sales?.countInit);
  const dbv = cv(db?.valueInit, db?.countInit);
  const cashless = da && dbv ? { count: da.count + dbv.count, value: da.value + dbv.value } : (da ?? dbv);
  const inInit = minor(r.cash.inInit?.total);
  const outInit = minor(r.cash.dispensedInit);
  return {
    paid: cv(r.vends.paid?.valueInit, r.vends.paid?.countInit),
    cashless,
    cash: cv(r.cash.sales?.valueInit, r.cash.sales?.countInit),
    tokens: cv(r.tokens?.valueInit, r.tokens?.countInit),
    cashNet: inInit !== null && outInit !== null ? inInit - outInit : null,
    products: r.products.flatMap((p) => {
      const v = minor(p.paid?.valueInit);
      const c = p.paid?.countInit;
      return v === null || c === null || c === undefined
        ? []
        : [{ selection: p.selection, name: p.name, count: c, value: v }];
    }),
    identity: {
      machine: r.machine.serial,
      board: r.controlBoard?.serial ?? null,
      initialised: r.initialised ? `${r.initialised.date ?? ""} ${r.initialised.time ?? ""}` : null,
    },
    currency: r.currency,
  };
}
