/**
 * What the dashboard reads, through Kysely only (the same queries on SQLite and PostgreSQL): the pages and
 * the JSON API call these, so both show the same numbers. Amounts are integer minor units with their
 * currency; aggregates are read through Number() because PostgreSQL returns sum() of bigint as a string.
 * The queries live by flow in the modules re-exported below.
 */
export { type BundleSummary, listBundles, type RolloutRow } from "./bundleQueries.js";
export { type Overview, overview } from "./overviewQuery.js";
export { addDays, currencyDecimals, daysBetween, weekStart } from "./queryDays.js";
export {
  type DailySeries,
  dailySeries,
  type SalesFilter,
  type SalesGroup,
  type SalesRow,
  salesBy,
  type Totals,
  totals,
} from "./salesQueries.js";
export { type UnitDetail, type UnitEventRow, unitDetail, type Vend } from "./unitDetailQuery.js";
export {
  BACKLOG_AGE_ALERT_MS,
  BACKLOG_EVENTS_ALERT,
  HEARTBEAT_INTERVAL_MS,
  listUnits,
  OFFLINE_AFTER_MS,
  type UnitStatus,
  type UnitSummary,
} from "./unitQueries.js";
