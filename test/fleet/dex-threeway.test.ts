/**
 * The three-way DEX reconciliation end to end (issue 36): a unit journals a simulated day of cashless vends
 * while a simulated machine (the `vendd sim-dex` machine model) counts them and cash vends; the machine is
 * read twice; the journal's outbox (sessions and `dex` reads) reaches the fleet through the signed unit API;
 * a settlement run stores the service's lines; the fleet's three-way report is clean. Then, one at a time: a
 * vend the machine counted but the unit did not, a captured payment the machine did not count, a cash
 * shortfall: each appears in its class with its amount, through `vendd fleet reconcile --dex` as a real
 * process too. The clean day runs on PostgreSQL as well.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { DEFAULT_SELECTIONS } from "../../drivers/dex/simulator/index.js";
import { DexMachine } from "../../drivers/dex/simulator/machine.js";
import { ManualClock } from "../../src/core/clock.js";
import type { UnitEvent } from "../../src/core/fleetWire.js";
import { loadDexReport } from "../../src/fleet/dex/load.js";
import { dexRows, dexTable } from "../../src/fleet/dex/output.js";
import { reconcile } from "../../src/fleet/reconcile/match.js";
import { saveRun } from "../../src/fleet/reconcile/run.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import type { ReportLine } from "../../src/payment/reporting/client.js";
import { machineRead } from "../support/dex.js";
import { fleetContext, send, simUnit } from "../support/fleet.js";
import { journalSale } from "../support/journalSales.js";
import { postgresAndDir } from "../support/postgres.js";

const run = promisify(execFile);
const DAY = "2026-11-27";
const at = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`);
const files = postgresAndDir("vendd-dex-3way-");
const price = (sel: string) => DEFAULT_SELECTIONS.find((s) => s.selection === sel)?.price ?? 0;

type Case =
  | "clean"
  | "machineNotUnit"
  | "capturedNoVend"
  | "cashShortfall"
  | "unitNotService"
  | "noSettlement"
  | "retrofit";

/** The unit's journal events of the day (sessions and two DEX reads), as the outbox holds them. */
function simulatedDay(unitId: string, c: Case): UnitEvent[] {
  const clock = new ManualClock(at("01:00"));
  const j = openSqliteJournal({ path: ":memory:", unitId, clock, outbox: { currency: "EUR" } });
  const machine = new DexMachine({
    commId: "SIM0000001",
    serial: "SIM000000001",
    selections: DEFAULT_SELECTIONS,
  });
  const read = (readId: string, hhmm: string) => {
    clock.advance(at(hhmm) - clock.now());
    j.recordDexRead(machineRead(machine, readId, clock.now()));
  };
  if (c === "retrofit") {
    // a retrofit unit: it sells (and the machine counts) before the first read, its baseline
    journalSale(j, { id: "early1", item: 11, price: price("11"), driver: "v10", paymentId: "order" });
    machine.vend("11", "DA");
    clock.advance(at("01:40") - clock.now());
    journalSale(j, { id: "early2", item: 12, price: price("12"), driver: "v10", paymentId: "order" });
    machine.vend("12", "DA");
  }
  read("read-0200", "02:00");
  const sels = ["11", "12", "13", "11", "12", "11", "13", "12"];
  sels.forEach((sel, i) => {
    clock.advance(at(`${String(6 + i).padStart(2, "0")}:15`) - clock.now());
    journalSale(j, { id: `s${i}`, item: Number(sel), price: price(sel), driver: "v10", paymentId: "order" });
    machine.vend(sel, "DA");
    machine.vend(sel === "11" ? "13" : "11", "CA");
  });
  clock.advance(at("12:30") - clock.now());
  if (c === "machineNotUnit") machine.vend("12", "DA");
  if (c === "capturedNoVend")
    journalSale(j, { id: "lost", item: 13, price: price("13"), driver: "v10", paymentId: "order" });
  if (c === "cashShortfall") machine.vend("12", "CA", undefined, price("12") - 70);
  read("read-1400", "14:00");
  if (c === "retrofit") {
    // and after the day's last read: the next read's window, not this one
    clock.advance(at("14:40") - clock.now());
    journalSale(j, { id: "late1", item: 13, price: price("13"), driver: "v10", paymentId: "order" });
    machine.vend("13", "DA");
  }
  const events = j.outboxPending(1000);
  j.close();
  return events;
}

/** The service's report of the day: every capture the unit made, as the service would list it. */
function reportOf(sales: { order_id: string; captured: number; closed_at: number }[]): ReportLine[] {
  return sales
    .filter((s) => s.captured > 0)
    .map((s) => ({
      paymentPointId: "pp-1",
      type: "Payment",
      amount: Number(s.captured),
      currencyCode: "EUR",
      timestamp: new Date(Number(s.closed_at)).toISOString(),
      at: Number(s.closed_at),
      paymentTransactionId: `tx-${s.order_id}`,
      orderId: s.order_id,
      transferReference: null,
    }));
}

/** Runs the day into a fleet database at `target`; returns the three-way report's rows. */
async function fleetDay(target: string, c: Case) {
  const clock = new ManualClock(at("15:00"));
  const { ctx, fdb } = await fleetContext(target, clock);
  const app = await createFleetApp(ctx);
  await app.ready();
  try {
    const u = simUnit("vm-dex1");
    expect(
      (await send(app, u.key, "POST", "/enroll", { unitId: u.id, label: "lobby" }, clock.now())).status,
    ).toBe(202);
    expect(await approveUnit(ctx, u.id, "manager")).toBe("done");
    const events = simulatedDay(u.id, c);
    const res = await send(app, u.key, "POST", "/events", { unitId: u.id, events }, clock.now());
    expect(res.status).toBe(200);
    expect(await ctx.db.selectFrom("dex_reads").select("read_id").orderBy("at").execute()).toHaveLength(2);
    const sales = await ctx.db.selectFrom("sales").selectAll().orderBy("closed_at").execute();
    // the service's report: every capture, except (unitNotService) the day's third sale's
    const lines = reportOf(sales).filter((_, i) => c !== "unitNotService" || i !== 2);
    const result = reconcile({ from: DAY, to: DAY, sales, lines, transfers: [], timeZone: "UTC" });
    if (c !== "noSettlement") await saveRun(ctx.db, result, clock.now());
    const report = await loadDexReport(ctx.db, { from: DAY, to: DAY, timeZone: "UTC" });
    return { report, rows: dexRows(report) };
  } finally {
    await app.close();
    await fdb.close();
  }
}

const cli = (db: string) =>
  run(
    process.execPath,
    [
      "dist/src/cli/main.js",
      "fleet",
      "reconcile",
      "--dex",
      "--from",
      DAY,
      "--to",
      DAY,
      "--db",
      db,
      "--format",
      "csv",
    ],
    {
      env: { ...process.env, VENDD_FLEET_TZ: "UTC" },
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );

describe("three-way DEX reconciliation over a simulated day", () => {
  it("a clean day: machine, unit and service agree (SQLite, and the CLI exits 0)", async () => {
    const db = join(files.dir, "clean.db");
    const { report, rows } = await fleetDay(db, "clean");
    expect(report.clean).toBe(true);
    expect(
      rows.map((r) => [r.unit, r.class, r.dexCount, r.dexValue, r.journalCount, r.serviceValue]),
    ).toEqual([["vm-dex1", "matched", 8, 1660, 8, 1660]]);
    expect(rows[0]?.note).toBe("machine, unit and service agree");
    expect(dexTable(report, rows)).toContain("(UTC): machine, units and payment service agree\n");
    expect(report.units[0]?.windows[0]?.products.find((p) => p.selection === "11")).toMatchObject({
      count: 8,
      value: 1200,
    });
    const out = await cli(db);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^unit,from,to,/);
    expect(out.stdout).toContain(
      "vm-dex1,2026-11-27T02:00:00Z,2026-11-27T14:00:00Z,read-0200,read-1400,matched,0,0,EUR",
    );
  }, 60_000);

  it("a clean day on PostgreSQL", async () => {
    const { report } = await fleetDay(await files.pg.createDatabase("dex_3way_clean"), "clean");
    expect(report.clean).toBe(true);
  }, 60_000);

  it.each([
    ["machineNotUnit", 270, 1],
    ["capturedNoVend", 200, 1],
    ["cashShortfall", 70, 0],
    ["unitNotService", 200, 1],
  ] as const)(
    "%s appears in its class with its amount (%i), through the CLI too",
    async (c, amount, count) => {
      const db = join(files.dir, `${c}.db`);
      const { report, rows } = await fleetDay(db, c);
      expect(report.clean).toBe(false);
      const bad = rows.filter((r) => !r.honest);
      expect(bad.map((r) => [r.unit, r.class, r.count, r.amount, r.currency])).toEqual([
        ["vm-dex1", c, count, amount, "EUR"],
      ]);
      const out = await cli(db);
      expect(out.code).toBe(1);
      expect(out.stdout).toContain(`read-0200,read-1400,${c},${count},${amount},EUR`);
    },
    60_000,
  );

  it("a retrofit day: sales before the first read and after the last are in no window, on either side (issue 42)", async () => {
    const db = join(files.dir, "retrofit.db");
    const { report, rows } = await fleetDay(db, "retrofit");
    // the service reported all eleven captures of the day; only the window's eight are compared
    expect(rows.map((r) => [r.class, r.dexCount, r.dexValue, r.journalCount, r.serviceValue])).toEqual([
      ["matched", 8, 1660, 8, 1660],
    ]);
    expect(report.clean).toBe(true);
    const out = await cli(db);
    expect(out.stdout).not.toContain("capturedNoVend");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(
      "vm-dex1,2026-11-27T02:00:00Z,2026-11-27T14:00:00Z,read-0200,read-1400,matched,0,0,EUR",
    );
  }, 60_000);

  it("without a settlement run the service is not compared, and the rows say which days to reconcile", async () => {
    const { report, rows } = await fleetDay(join(files.dir, "nosettle.db"), "noSettlement");
    expect(report.clean).toBe(true);
    expect(report.units[0]?.uncoveredDays).toEqual([DAY]);
    expect(rows.map((r) => [r.class, r.serviceValue])).toEqual([["matched", null]]);
    expect(rows[0]?.note).toBe(
      `machine and unit agree (service not compared: no reconciliation run for ${DAY})`,
    );
    // The table and the page claim no agreement of a service they did not compare.
    expect(dexTable(report, rows)).toContain(
      "machine and units agree; the payment service not compared (no settlement run for some days)",
    );
    expect(dexTable(report, rows)).not.toContain("service agree");
  }, 60_000);
});
