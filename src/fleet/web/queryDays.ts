/**
 * Calendar-day helpers of the dashboard's queries: day validation and arithmetic on `YYYY-MM-DD` strings
 * (no time zone involved), and a currency's minor-unit digits.
 */

/** `day` plus `n` days (calendar arithmetic on the date, no time zone involved). */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** Monday of `day`'s ISO week. */
export function weekStart(day: string): string {
  const wd = new Date(`${day}T00:00:00Z`).getUTCDay();
  return addDays(day, -((wd + 6) % 7));
}

/** Every day from `from` to `to` inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to && out.length < 400; d = addDays(d, 1)) out.push(d);
  return out;
}

/** A currency's exponent: the one money module (src/core/money.ts). */
export { currencyDecimals } from "../../core/money.js";
