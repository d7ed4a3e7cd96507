/**
 * A bundle's expiry as `vendd bundle create --expires` takes it: a day (`2027-01-31`, the end of that day UTC),
 * checked by the project's one day parser, or an ISO 8601 date-time; normalised to whole seconds in UTC.
 */
import { hasDayShape, isDay } from "../core/days.js";

/** The expiry `text` normalised (`2027-01-31T23:59:59Z`), or null when it is neither form. */
export function normaliseExpiry(text: string): string | null {
  const day = hasDayShape(text) ? (isDay(text) ? `${text}T23:59:59Z` : "") : text;
  const t = Date.parse(day);
  if (!/^\d{4}-\d\d-\d\dT/.test(day) || Number.isNaN(t)) return null;
  return new Date(Math.floor(t / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
