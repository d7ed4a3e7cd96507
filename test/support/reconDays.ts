/**
 * Generated days for the reconciliation acceptance test (issue 30): each case is one local day in one time
 * zone, one currency and one injected discrepancy (or none). Its sales are written the way the unit writes
 * them (a journal, through the journal's own API) and the way the payment service records them (the
 * emulator's ledger, read back through the real reporting interface and its transfers), in time order.
 */
import { seededRandom } from "../../src/core/random.js";
import { dayStart, nextDay } from "../../src/fleet/reconcile/run.js";

export const ZONES: readonly { zone: string; day?: string }[] = [
  { zone: "UTC" },
  { zone: "Etc/GMT-12" },
  { zone: "Pacific/Kiritimati" },
  { zone: "Pacific/Pago_Pago" },
  { zone: "Asia/Kathmandu" },
  { zone: "Europe/Copenhagen", day: "2026-03-29" },
  { zone: "Europe/Copenhagen", day: "2026-10-25" },
];
export const CURRENCIES = ["DKK", "NOK", "EUR"] as const;
export type Currency = (typeof CURRENCIES)[number];
export const INJECTED = [
  "clean",
  "missingInReport",
  "unknownInFleet",
  "amountMismatch",
  "doubleCapture",
  "refundNotInJournal",
  "laterDayRefund",
  "currencyMismatch",
  "transferTotalWrong",
  "feeWrong",
] as const;
export type Injected = (typeof INJECTED)[number];

export interface Case {
  n: number;
  unit: string;
  zone: string;
  day: string;
  currency: Currency;
  injected: Injected;
}

/** A small deterministic generator: the project's one (mulberry32, src/core/random.ts). */
export const seeded = seededRandom;

function plusDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/**
 * `count` cases: the first max(zones, injections) cover every zone, currency and injection at least once;
 * the rest are drawn from `seed`. Days are at least 5 days apart, so no case's report window, transfer or
 * earlier sale touches another's; the fixed Copenhagen DST days keep their dates.
 */
export function generateCases(count: number, seed: number): Case[] {
  const rnd = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const raw: (Omit<Case, "n" | "unit" | "day"> & { fixed?: string })[] = [];
  const base = Math.max(ZONES.length, INJECTED.length);
  const usedFixed = new Set<string>();
  for (let i = 0; i < count; i++) {
    const z = i < base ? (ZONES[i % ZONES.length] as (typeof ZONES)[number]) : pick(ZONES);
    // A fixed DST day holds one case (cases never share a day); a second draw gets a generated day.
    const fixedDay = z.day !== undefined && !usedFixed.has(z.day) ? z.day : undefined;
    if (fixedDay !== undefined) usedFixed.add(fixedDay);
    raw.push({
      zone: z.zone,
      ...(fixedDay === undefined ? {} : { fixed: fixedDay }),
      currency: i < base ? (CURRENCIES[i % CURRENCIES.length] as Currency) : pick(CURRENCIES),
      injected: i < base ? (INJECTED[i % INJECTED.length] as Injected) : pick(INJECTED),
    });
  }
  const fixed: string[] = [];
  for (const r of raw) if (r.fixed !== undefined) fixed.push(r.fixed);
  const near = (day: string) => fixed.some((f) => Math.abs(Date.parse(f) - Date.parse(day)) < 6 * 86_400_000);
  let next = "2026-01-10";
  const cases: Case[] = raw.map((r, n) => {
    let day = r.fixed;
    if (day === undefined) {
      while (near(next)) next = plusDays(next, 1);
      day = next;
      next = plusDays(next, 6);
    }
    return { n, unit: `u${n}`, zone: r.zone, day, currency: r.currency, injected: r.injected };
  });
  return cases.sort((a, b) => a.day.localeCompare(b.day));
}

/** Instants of a case's sales: 00:30 local, 08:00, 12:00 and 30 minutes before the day ends. */
export function saleTimes(c: Case): number[] {
  const start = dayStart(c.day, c.zone);
  const end = dayStart(nextDay(c.day), c.zone);
  return [start + 30 * 60_000, start + 8 * 3600_000, start + 12 * 3600_000, end - 30 * 60_000];
}
