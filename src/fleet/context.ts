/**
 * What every part of the fleet server shares: the database, the clock, the logger and the reporting time
 * zone. The unit API (unitApi.ts), the dashboard (web/) and reconciliation (reconcile/) each take it.
 */
import type { Kysely } from "kysely";
import type pino from "pino";
import type { Clock } from "../core/clock.js";
import type { PublicKey } from "../update/minisign.js";
import type { FleetDialect } from "./db/migrations.js";
import type { FleetDatabase } from "./db/schema.js";

export interface FleetContext {
  db: Kysely<FleetDatabase>;
  /** FleetDb.light: PostgreSQL sessions with `synchronous_commit = off` (db/light.ts); absent: `db`. */
  lightDb?: Kysely<FleetDatabase>;
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

/** `YYYY-MM-DD` of an instant in a time zone (one formatter per zone: making one costs ~100 µs). */
export function dayOf(ms: number, timeZone: string): string {
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
  return `${get("year")}-${get("month")}-${get("day")}`;
}
