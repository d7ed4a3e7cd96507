/**
 * What every part of the fleet server shares: the database, the clock, the logger and the reporting time
 * zone. The unit API (units/routes.ts), the dashboard shell (web/) and every feature take it.
 */
import type { Kysely } from "kysely";
import type pino from "pino";
import type { Clock } from "../core/clock.js";
import { DAY_MS } from "../core/days.js";
import type { PublicKey } from "../update/minisign.js";
import type { FleetDialect } from "./db/migrator.js";
import type { FleetDatabase } from "./db/schema.js";
import type { HotPath } from "./db/unitStatements.js";

export interface FleetContext {
  db: Kysely<FleetDatabase>;
  /** FleetDb.light: PostgreSQL sessions with `synchronous_commit = off` (db/asyncCommit.ts); absent: `db`. */
  lightDb?: Kysely<FleetDatabase>;
  /** FleetDb.hot: the unit API's per-request statements; absent: db/unitStatements.ts's Kysely ones on `db`. */
  hot?: HotPath;
  dialect: FleetDialect;
  clock: Clock;
  logger: pino.Logger;
  /** IANA time zone in which sales days are counted (`sales.day`), e.g. `Europe/Oslo`. */
  timeZone: string;
  /**
   * Minisign public keys an uploaded bundle must be signed by (`vendd fleet serve --bundle-key`): the
   * default of `storeBundle`, for the dashboard's upload form. Absent or empty: any signed bundle.
   */
  bundleKeys?: readonly PublicKey[];
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();
/** Days by zone and quarter hour: every zone's offset is a whole number of quarter hours. */
const dayCache = new Map<string, Map<number, string>>();
const QUARTER_HOUR_MS = 15 * 60_000;
const DAY_CACHE_MAX = 4096;

/**
 * `YYYY-MM-DD` of an instant in a time zone. Formatting costs ~10 µs (making a formatter ~100 µs), and
 * every ingested session needs one, so days are remembered by quarter hour: a day starts on a quarter hour
 * in every zone, so every instant of one quarter hour has the same day.
 */
export function dayOf(ms: number, timeZone: string): string {
  const quarter = Math.floor(ms / QUARTER_HOUR_MS);
  let days = dayCache.get(timeZone);
  const known = days?.get(quarter);
  if (known !== undefined) return known;
  let format = dayFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    dayFormats.set(timeZone, format);
  }
  const parts = format.formatToParts(new Date(ms));
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? "00";
  const day = `${get("year")}-${get("month")}-${get("day")}`;
  if (days === undefined) {
    days = new Map();
    dayCache.set(timeZone, days);
  }
  if (days.size >= DAY_CACHE_MAX) days.clear();
  days.set(quarter, day);
  return day;
}

/** The day after `day` (`YYYY-MM-DD`). */
export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

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

/** UTC offset (ms) of a time zone at an instant. */
function offsetAt(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(ms));
  const n = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? "0");
  const wall = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"));
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The instant a day starts in a time zone. */
export function dayStart(day: string, timeZone: string): number {
  const guess = Date.parse(`${day}T00:00:00Z`);
  const first = guess - offsetAt(guess, timeZone);
  return guess - offsetAt(first, timeZone);
}
