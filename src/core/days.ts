/**
 * The one day parser and range rule of vendd: the CLI (`--from`, `--to`), the technician console
 * (`sales DAY`), the dashboard and the API (`from`, `to`) all check days here, so a day that does not exist
 * (2026-02-30, 2026-13-01) is refused the same way everywhere, naming the option or parameter at fault.
 * A day is a calendar date `YYYY-MM-DD` without a time zone; each caller says which zone it counts in.
 */
import { printable } from "./printable.js";

/** The longest range of days one request may cover: a year (366 days with a leap day). */
export const MAX_RANGE_DAYS = 366;

/** A day's length in milliseconds (24 hours: UTC arithmetic; a zone's day is found with zonedTime). */
export const DAY_MS = 86_400_000;

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `text` has a day's shape `YYYY-MM-DD` (digits; the day need not exist: see isDay). */
export function hasDayShape(text: string): boolean {
  return DAY.test(text);
}

/** Whether `text` is a day `YYYY-MM-DD` that exists in the calendar. */
export function isDay(text: string): boolean {
  const m = DAY.exec(text);
  if (m === null) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.toISOString().slice(0, 10) === text;
}

/** Why `text` given as `name` is not a day, or null when it is one. */
export function dayRefusal(name: string, text: string): string | null {
  if (isDay(text)) return null;
  return `${name} ${printable(text, 40)}: not a day; give a date YYYY-MM-DD that exists, e.g. 2026-02-28`;
}

/** The day `YYYY-MM-DD` of `ms` in this machine's local time zone (the unit's: the console's "today"). */
export function localDay(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** Days from `from` to `to`, both included (calendar arithmetic, no time zone). */
export function daysInRange(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

/**
 * The range rule: both days exist, `from` ≤ `to`, at most MAX_RANGE_DAYS days. Null when it holds, else
 * the refusal naming the option or parameter at fault (`names`: `--from`/`--to`, or `from`/`to`).
 */
export function rangeRefusal(
  from: string,
  to: string,
  names: { from: string; to: string } = { from: "--from", to: "--to" },
): string | null {
  const bad = dayRefusal(names.from, from) ?? dayRefusal(names.to, to);
  if (bad !== null) return bad;
  if (to < from)
    return `${names.to} ${to} is before ${names.from} ${from}; give ${names.from} <= ${names.to}`;
  const n = daysInRange(from, to);
  if (n > MAX_RANGE_DAYS)
    return `${names.from} ${from} to ${names.to} ${to} is ${n} days; at most ${MAX_RANGE_DAYS} (a year) at once`;
  return null;
}

/**
 * `ms` as `YYYY-MM-DD HH:MM` (with `:SS` when `seconds`) in `timeZone` (an IANA name; default this
 * machine's zone, the unit's), followed by the zone it is in: `2026-12-02 14:05 UTC+1`, `... UTC`. Every
 * time a person reads (console, `vendd journal`, dashboard) names its zone this way.
 */
export function zonedTime(ms: number, timeZone?: string, seconds = false): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    ...(timeZone === undefined ? {} : { timeZone }),
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    ...(seconds ? { second: "2-digit" } : {}),
    hourCycle: "h23",
    timeZoneName: "shortOffset",
  }).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  const zone = zoneLabel(part("timeZoneName"));
  const clock = `${part("hour")}:${part("minute")}${seconds ? `:${part("second")}` : ""}`;
  return `${part("year")}-${part("month")}-${part("day")} ${clock} ${zone}`;
}

/** The zone `timeZone` (default this machine's) is in at `ms`, as zonedTime names it: `UTC+1`, `UTC`. */
export function zoneAt(ms: number, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    ...(timeZone === undefined ? {} : { timeZone }),
    timeZoneName: "shortOffset",
  }).formatToParts(new Date(ms));
  return zoneLabel(parts.find((p) => p.type === "timeZoneName")?.value ?? "");
}

function zoneLabel(name: string): string {
  const label = name.replace(/^GMT/, "UTC");
  return label === "" || label === "UTC+0" ? "UTC" : label;
}

/**
 * A bundle's expiry (an instant) as people read it: an expiry given as a day (`--expires 2027-03-31`, the
 * end of that day UTC) shows as that day, `2027-03-31 (end of day, UTC)`, in every zone; any other instant
 * as `zonedTime` in UTC.
 */
export function expiryText(ms: number): string {
  const iso = new Date(ms).toISOString();
  if (iso.endsWith("T23:59:59.000Z")) return `${iso.slice(0, 10)} (end of day, UTC)`;
  return zonedTime(ms, "UTC", true);
}
