/**
 * The fleet's database as the features make it: every migration in order, each a name the database records
 * (never changed once released) and the steps the features contribute to it, and the opener that applies
 * them. db/ knows no feature: this list hands the features' migrations to it. A new feature's tables are
 * one more entry at the end, named with the next number.
 */
import { alertSilencesUp, alertsUp } from "./alerts/migration.js";
import { bundlesTables, bundleVerifiedColumn } from "./bundles/migration.js";
import type { FleetMigration } from "./db/migrator.js";
import { type FleetDb, type OpenFleetDbOptions, openDatabase } from "./db/open.js";
import { dexG85Up, dexMigrationUp } from "./dex/migration.js";
import { unitGroupsTable } from "./groups/migration.js";
import { eventsTable } from "./ingest/migration.js";
import { invoicesUp } from "./invoices/migration.js";
import { plansMigrationUp } from "./plans/migration.js";
import { reconLinesCurrency, reconTables } from "./reconcile/migration.js";
import { rolloutsUp } from "./rollouts/migration.js";
import { salesCurrencyIndex, salesTable } from "./sales/migration.js";
import { noncesTable, unitsTable } from "./units/migration.js";
import { fleetValuesTable } from "./values/migration.js";
import { accountsTables } from "./web/migration.js";

export const FLEET_MIGRATIONS: readonly FleetMigration[] = [
  /** The unit API, ingest, sales, bundles, the dashboard's accounts and reconciliation (issues 16, 17). */
  {
    name: "0001_fleet",
    steps: [unitsTable, eventsTable, salesTable, noncesTable, bundlesTables, accountsTables, reconTables],
  },
  /** Issue 18: plans, members, charges, overages, callbacks seen, refunds, entitlement lists. */
  { name: "0002_plans", steps: [plansMigrationUp] },
  /** Issue 18: companies, the product catalogue, invoices and their numbering. */
  { name: "0003_invoices", steps: [invoicesUp] },
  /**
   * Issue 30: reconciliation per currency. `sales.currency` has been stored since 0001 (every session event
   * carries the unit's currency), so no sales row lacks one; reconciliation lines now record theirs, and
   * totals per day and currency read an index.
   */
  { name: "0004_sales_currency", steps: [reconLinesCurrency, salesCurrencyIndex] },
  /** Issue 33: whether a bundle's signature was checked at upload. */
  { name: "0005_bundle_verified", steps: [bundleVerifiedColumn] },
  /** Issue 36: DEX reads of the units' vending machines. */
  { name: "0006_dex", steps: [dexMigrationUp] },
  /** Issue 37: alerts, their changes, the delivery outbox and the evaluator's lease. */
  { name: "0007_alerts", steps: [alertsUp] },
  /** Issue 42: each DEX read's G85 result, and the machines whose G85 a manager marked as always wrong. */
  { name: "0008_dex_g85", steps: [dexG85Up] },
  /** Issue 41: groups (labels on units) that rollouts and per-group values target. */
  { name: "0009_unit_groups", steps: [unitGroupsTable] },
  /** Issue 41: rollouts of a bundle in phases, the steps units report, each unit's phase. */
  { name: "0010_rollouts", steps: [rolloutsUp] },
  /** Issue 42: alert silences and maintenance windows; which change a silence kept from being sent. */
  { name: "0011_alert_silences", steps: [alertSilencesUp] },
  /** Issue 41: config values the fleet holds per group and per unit, delivered signed to each unit. */
  { name: "0012_fleet_values", steps: [fleetValuesTable] },
];

/**
 * Opens (and migrates) the fleet database at `target`; a failure is a FleetDbError naming it and the next
 * step. A SQLite file that does not exist is created only with `opts.create` (default true for callers in
 * code; the admin commands pass false).
 */
export function openFleetDb(target: string, opts: OpenFleetDbOptions = {}): Promise<FleetDb> {
  return openDatabase(target, FLEET_MIGRATIONS, opts);
}
