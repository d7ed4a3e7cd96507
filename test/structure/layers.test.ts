import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type Allowed,
  checkFleetSql,
  checkLayers,
  fleetFeatureCycles,
  readSources,
  testOnlyMatcher,
  type Violation,
} from "../support/layers.js";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * Imports the rule refuses that stay until the work that removes them lands. Each entry must match an
 * import of the tree (the test fails on a stale entry), so it disappears with its reason.
 */
const ALLOWED: readonly Allowed[] = [];

/**
 * Files of src/fleet/ that may hold SQL outside a store while the work that moves it is pending: none since
 * issue 35 moved every query into its feature's store. An entry must still hold SQL (the test fails on a
 * stale entry).
 */
const SQL_ALLOWED: readonly string[] = [];

function buildExcludes(): string[] {
  const parsed: unknown = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8"));
  const exclude = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "exclude") : undefined;
  if (!Array.isArray(exclude) || !exclude.every((e) => typeof e === "string")) {
    throw new Error("tsconfig.build.json has no exclude list of strings");
  }
  return exclude;
}

const testOnly = testOnlyMatcher(buildExcludes());

const check = (files: ReadonlyMap<string, string>, allowed: readonly Allowed[] = []) =>
  checkLayers(files, allowed, testOnly);

const show = (v: readonly Violation[]) => v.map((x) => `${x.from} -> ${x.to}: ${x.rule}`);

describe("the dependency rule (README, Architecture)", () => {
  it("holds for every source file of src/, drivers/ and scripts/", () => {
    const files = readSources(ROOT, ["src", "drivers", "scripts"]);
    expect(files.size).toBeGreaterThan(100);
    const { violations, staleAllowed } = check(files, ALLOWED);
    const lines = show(violations);
    if (lines.length > 0) console.error(`imports against the layer rule:\n${lines.join("\n")}`);
    expect(lines).toEqual([]);
    expect(staleAllowed.map((a) => `${a.from} -> ${a.to} is no longer imported: remove it`)).toEqual([]);
  });

  it("keeps every fleet query in a store (store.ts, *Store.ts, store/, migration.ts, database.ts, db/)", () => {
    const files = readSources(ROOT, ["src"]);
    const { violations, staleAllowed } = checkFleetSql(files, SQL_ALLOWED, testOnly);
    expect(violations.map((v) => `${v.file}: ${v.call} outside a store`)).toEqual([]);
    expect(staleAllowed.map((f) => `${f} holds no SQL any more: remove it from SQL_ALLOWED`)).toEqual([]);
  });

  it("has no circle between fleet features", () => {
    expect(fleetFeatureCycles(readSources(ROOT, ["src"]), testOnly)).toEqual([]);
  });

  it("refuses a circle between fleet features, direct or through a third", () => {
    const two = new Map([
      ["src/fleet/units/overviewStore.ts", 'import { totals } from "../sales/index.js";'],
      ["src/fleet/sales/routes.ts", 'import { listUnits } from "../units/index.js";'],
    ]);
    expect(fleetFeatureCycles(two, testOnly)).toEqual(["sales -> units -> sales"]);
    const three = new Map([
      ["src/fleet/invoices/cycle.ts", 'import { members } from "../plans/index.js";'],
      ["src/fleet/plans/routes.ts", 'import type { Company } from "../companies/index.js";'],
      ["src/fleet/companies/views.ts", 'import type { Invoice } from "../invoices/index.js";'],
    ]);
    expect(fleetFeatureCycles(three, testOnly)).toEqual(["companies -> invoices -> plans -> companies"]);
  });

  // SQL outside a store, each as a one-line file: the rule must refuse every one.
  it.each([
    ["src/fleet/sales/routes.ts", 'const rows = await db.selectFrom("sales").selectAll().execute();'],
    ["src/fleet/units/views.ts", 'await ctx.db.insertInto("units").values(row).execute();'],
    ["src/fleet/web/accounts.ts", 'await db.updateTable("users").set({ role }).execute();'],
    ["src/fleet/jobs/lock.ts", "await sql`select pg_advisory_unlock(1, 2)`.execute(conn);"],
    ["src/fleet/jobs/lock.ts", "const got = await sql<{ locked: boolean }>`select 1`.execute(conn);"],
    ["src/fleet/server.ts", 'await ctx.db.deleteFrom("nonces").execute();'],
    ["src/fleet/reconcile/run.ts", "return db.transaction().execute(async (tx) => save(tx));"],
    ["src/fleet/features.ts", 'await db.schema.createTable("x").execute();'],
  ])("refuses SQL outside a store: %s: %s", (file, line) => {
    const { violations } = checkFleetSql(new Map([[file, line]]), [], testOnly);
    expect(violations.map((v) => v.file)).toEqual([file]);
  });

  it.each([
    ["src/fleet/sales/store.ts", 'const rows = await db.selectFrom("sales").selectAll().execute();'],
    ["src/fleet/units/detailStore.ts", 'await ctx.db.selectFrom("events").selectAll().execute();'],
    ["src/fleet/plans/store/members.ts", 'await db.insertInto("plan_members").values(m).execute();'],
    ["src/fleet/alerts/migration.ts", 'await db.schema.createTable("alerts").execute();'],
    ["src/fleet/database.ts", 'await db.schema.createTable("x").execute();'],
    ["src/fleet/db/health.ts", "await sql`select 1`.execute(db);"],
    ["src/fleet/sales/store.test.ts", 'await db.selectFrom("sales").selectAll().execute();'],
    ["src/journal/sqlite.ts", 'db.prepare("select 1"); await db.selectFrom("x");'],
    ["src/fleet/sales/routes.ts", '// the store runs db.selectFrom("sales"); routes call it'],
  ])("accepts SQL in %s: %s", (file, line) => {
    expect(checkFleetSql(new Map([[file, line]]), [], testOnly).violations).toEqual([]);
  });

  // The imports issue 11 found, each as a one-line file: the rule must refuse every one.
  it.each([
    ["src/config/schema-devices.ts", 'import { MIN_PULSE_MS } from "../../drivers/gpio/pulse.js";'],
    ["src/config/schema.ts", 'import type { SessionResult } from "../engine/types.js";'],
    ["drivers/vmc/factory.ts", 'import type { VenddConfig } from "../../src/config/load.js";'],
    ["drivers/vmc/factory.ts", 'const m = await import("../../src/config/seams.js");'],
    ["drivers/gpio/port.ts", 'import type { Journal } from "../../src/journal/journal.js";'],
    ["src/engine/options.ts", 'import type { VenddConfig } from "../config/load.js";'],
    ["src/payment/factory.ts", 'import type { Secrets } from "../config/load.js";'],
    ["src/emulator/clientSettings.ts", 'import type { Secrets } from "../config/load.js";'],
    ["src/journal/journal.ts", 'import type { SessionResult } from "../engine/types.js";'],
    ["src/journal/reconcile.ts", 'import type { LedgerEntry } from "../emulator/types.js";'],
    ["src/daemon/daemon.ts", 'import { startEmulator } from "../emulator/index.js";'],
    ["src/engine/runner.ts", 'import { startDaemon } from "../daemon/daemon.js";'],
    ["src/journal/sqlite.ts", 'import { isPaymentError } from "../payment/errors.js";'],
    ["src/daemon/daemon.ts", 'import { runDoctor } from "../doctor/run.js";'],
    ["src/config/seams.ts", 'import { createGpio } from "../../drivers/gpio/factory.js";'],
    ["src/engine/runner.ts", 'import { emulatorDriver } from "../payment/v10/emulator.test-support.js";'],
    ["src/chaos/journalView.ts", 'import { toSession } from "../journal/rows.js";'],
    ["src/widgets/x.ts", 'import { systemClock } from "../core/clock.js";'],
    ["src/update/apply.ts", 'import { openJournal } from "../journal/sqlite.js";'],
    ["src/update/apply.ts", 'import type { Engine } from "../engine/engine.js";'],
    ["src/update/apply.ts", 'import { consistency } from "../check/consistency.js";'],
    ["src/config/load.ts", 'import { verifyBundle } from "../update/bundle.js";'],
  ])("refuses %s: %s", (file, line) => {
    const { violations } = check(new Map([[file, line]]));
    expect(show(violations)).toHaveLength(1);
  });

  // The fleet's rooms (issue 35, test/support/layers.ts FLEET_FEATURES): one refused import per rule.
  it.each([
    // A view renders HTML: it imports no store (its own or another's), not even for a type.
    ["src/fleet/alerts/views.ts", 'import { listAlerts } from "./store.js";'],
    ["src/fleet/plans/views.ts", 'import type { InvoiceRow } from "../invoices/store.js";'],
    ["src/fleet/units/views.ts", 'import type { UnitDetail } from "./detailStore.js";'],
    ["src/fleet/plans/views.ts", 'import { memberRows } from "./store/members.js";'],
    // A feature reaches another only through its index.ts: never its store, routes, views or other files.
    ["src/fleet/invoices/build.ts", 'import { usageOf } from "../plans/store.js";'],
    ["src/fleet/companies/routes.ts", 'import { mountInvoicePages } from "../invoices/routes.js";'],
    ["src/fleet/ingest/store.ts", 'import { storeDexRead } from "../dex/load.js";'],
    // db/ knows no feature (and nothing of the composition): features hand it their migrations.
    ["src/fleet/db/migrator.ts", 'import { plansMigrationUp } from "../plans/migration.js";'],
    ["src/fleet/db/schema.ts", 'import type { PlansDatabase } from "../plans/index.js";'],
    ["src/fleet/db/open.ts", 'import { FLEET_MIGRATIONS } from "../database.js";'],
    // Neither a feature nor a shared room imports the composition that mounts them.
    ["src/fleet/plans/routes.ts", 'import type { FleetServices } from "../services.js";'],
    ["src/fleet/web/index.ts", 'import { fleetPlugins } from "../features.js";'],
    // The shared rooms, like the features, reach a feature only through its index.ts.
    ["src/fleet/web/pages.ts", 'import { alertCounts } from "../alerts/store.js";'],
  ])("refuses %s: %s", (file, line) => {
    const { violations } = check(new Map([[file, line]]));
    expect(show(violations)).toHaveLength(1);
  });

  it.each([
    ["src/fleet/invoices/build.ts", 'import { countedPlanVends } from "../plans/index.js";'],
    ["src/fleet/alerts/views.ts", 'import type { AlertView } from "./rows.js";'],
    ["src/fleet/plans/routes.ts", 'import { html } from "../web/html.js";'],
    ["src/fleet/units/routes.ts", 'import { kyselyHotPath } from "../db/unitStatements.js";'],
    ["src/fleet/dex/load.ts", 'import { dayStart } from "../context.js";'],
    ["src/fleet/features.ts", 'import { mountPlanPages } from "./plans/routes.js";'],
    ["src/fleet/database.ts", 'import { alertsUp } from "./alerts/migration.js";'],
    ["src/fleet/db/open.ts", 'import { migrate } from "./migrator.js";'],
    ["src/fleet/plans/plans.test.ts", 'import { openFleetDb } from "../database.js";'],
  ])("accepts in the fleet %s: %s", (file, line) => {
    expect(show(check(new Map([[file, line]])).violations)).toEqual([]);
  });

  it.each([
    ["src/config/seams.ts", 'import type { GpioOptions } from "../../drivers/gpio/factory.js";'],
    ["src/config/seams.ts", 'import { type EngineOptions, type X } from "../engine/options.js";'],
    ["src/config/schema.ts", 'import { parseAmount } from "../core/money.js";'],
    ["src/update/apply.ts", 'import { loadConfig } from "../config/load.js";'],
    ["src/cli/bundle.ts", 'import { applyInbox } from "../update/apply.js";'],
    ["src/daemon/daemon.ts", 'import { readUpdateOutcome } from "../update/state.js";'],
    ["src/emulator/legacy/index.ts", 'import { sign } from "../../payment/legacy/signing.js";'],
    ["src/demo/unit.ts", 'import { startEmulator } from "../emulator/index.js";'],
    ["src/engine/recovery.ts", 'import type { SessionResult } from "../journal/journal.js";'],
    ["drivers/vmc/factory.ts", 'const g = await import("../gpio/factory.js");'],
    ["src/payment/v10/x.test.ts", 'import { startEmulator } from "../../emulator/index.js";'],
    ["src/cli/run.ts", "// an old note: import { x } from '../emulator/index.js';"],
  ])("accepts %s: %s", (file, line) => {
    expect(show(check(new Map([[file, line]])).violations)).toEqual([]);
  });
});
