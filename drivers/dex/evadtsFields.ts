/**
 * Element readers for EVA-DTS segments: trimmed text, bounded integers, the ID402 currency code. Each
 * reader returns null for an empty or missing element and reports a malformed one through `warn`, so one
 * bad field never fails the file (dex.md §6).
 */
import type { DeviceId, SelectionCounter, ValueCounter } from "./evadtsTypes.js";

export type Warn = (message: string) => void;

/** The elements of one segment with the reporting context: `el(3)` is element 03 (VA103). */
export class Elements {
  constructor(
    readonly id: string,
    private readonly els: readonly string[],
    private readonly line: number,
    private readonly warn: Warn,
  ) {}

  /** Element `n` (1-based) as trimmed text; null when empty or absent. */
  text(n: number): string | null {
    const v = this.els[n - 1];
    return v === undefined || v === "" ? null : v;
  }

  /** Element `n` as a whole number (Nc money in file units or N0 count); null when empty, absent or bad. */
  int(n: number): number | null {
    const v = this.text(n);
    if (v === null) return null;
    if (/^-?\d{1,15}$/.test(v)) return Number(v);
    this.warn(
      `line ${this.line}: ${this.id}${String(n).padStart(2, "0")} is not a whole number ('${v.slice(0, 20)}'); ignored`,
    );
    return null;
  }

  /** Element `n` as a 0/1 flag. */
  flag(n: number): boolean | null {
    const v = this.int(n);
    return v === null ? null : v !== 0;
  }
}

/** VA1/VA2/VA3/CA2/DA2/DB2/TA2: value I, count I, value R, count R from element `from`. */
export function valueCounter(e: Elements, from = 1): ValueCounter {
  return {
    valueInit: e.int(from),
    countInit: e.int(from + 1),
    valueReset: e.int(from + 2),
    countReset: e.int(from + 3),
  };
}

/** PA2/PA3/PA4: count I, value I, count R, value R. */
export function selectionCounter(e: Elements): SelectionCounter {
  return { countInit: e.int(1), valueInit: e.int(2), countReset: e.int(3), valueReset: e.int(4) };
}

/** CB1/CA1/DA1/DB1: serial, model, software revision. */
export function deviceId(e: Elements): DeviceId {
  return { serial: e.text(1), model: e.text(2), software: e.text(3) };
}

/** ISO 4217 numeric → alpha for the currencies a fleet is likely to meet; others keep only the number. */
const ISO_NUMERIC: Readonly<Record<string, string>> = {
  "978": "EUR",
  "840": "USD",
  "826": "GBP",
  "756": "CHF",
  "752": "SEK",
  "578": "NOK",
  "208": "DKK",
  "985": "PLN",
  "203": "CZK",
  "348": "HUF",
  "946": "RON",
  "392": "JPY",
  "124": "CAD",
  "036": "AUD",
};

/**
 * ID402 and ID403 to a currency: ID403 when it is three letters; else ID402 `1nnn` is ISO 4217 numeric;
 * `0nnn` is a telephone country code (only `0001` is read, as USD). Anything else is unknown (null).
 */
export function currencyOf(numeric: string | null, alpha: string | null): string | null {
  if (alpha && /^[A-Za-z]{3}$/.test(alpha)) return alpha.toUpperCase();
  if (numeric && /^1\d{3}$/.test(numeric)) return ISO_NUMERIC[numeric.slice(1)] ?? null;
  if (numeric === "0001") return "USD";
  return null;
}

/**
 * A value in the file's units (`decimals` places) as minor units of a currency with `minorDigits` places.
 * @returns null when the conversion would lose a fraction (the caller reports it).
 */
export function toMinor(value: number, decimals: number, minorDigits = 2): number | null {
  if (decimals === minorDigits) return value;
  if (decimals < minorDigits) return value * 10 ** (minorDigits - decimals);
  const div = 10 ** (decimals - minorDigits);
  return value % div === 0 ? value / div : null;
}
