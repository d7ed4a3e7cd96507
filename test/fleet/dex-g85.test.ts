/**
 * Issue 42: a DEX read whose file fails its G85 check is kept but unverified. The unit journals reads of a
 * simulated machine (the `vendd sim-dex` machine model) where one file came through corrupt (its cashless
 * counter garbled, its G85 no longer matching); the reads reach the fleet through the signed unit API. The
 * fleet stores the G85 flag (it dropped it), `vendd fleet reconcile --dex` (a real process) never turns the
 * unverified counters into a difference or a counter reset, says "unverified (G85)", and bounds the window
 * with the next verified read; a manager marks a machine whose G85 is always wrong with `vendd fleet
 * dex-g85` and the report then says so.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { countersOf } from "../../drivers/dex/counters.js";
import { parseEvaDts } from "../../drivers/dex/evadts.js";
import { DEFAULT_SELECTIONS } from "../../drivers/dex/simulator/index.js";
import { DexMachine } from "../../drivers/dex/simulator/machine.js";
import { ManualClock } from "../../src/core/clock.js";
import { loadDexReport } from "../../src/fleet/dex/load.js";
import { dexRows } from "../../src/fleet/dex/output.js";
import { renderDexPage } from "../../src/fleet/dex/views.js";
import { reconcile } from "../../src/fleet/reconcile/match.js";
import { saveRun } from "../../src/fleet/reconcile/run.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit, unitDetail } from "../../src/fleet/units/index.js";
import { unitPage } from "../../src/fleet/units/views.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { requireBuiltCli } from "../support/daemon.js";
import { fleetContext, send, simUnit } from "../support/fleet.js";
import { journalSale } from "../support/journalSales.js";

const run = promisify(execFile);
const DAY = "2026-11-27";
const at = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`);
const dir = { path: mkdtempSync(join(tmpdir(), "vendd-dex-g85-")) };
afterAll(() => rmSync(dir.path, { recursive: true, force: true }));

/** The unit's day: a baseline read, two vends, a corrupt read, two vends, then (unless `lastBad`) a good read. */
async function fleetDay(db: string, lastBad: boolean) {
  const fleetClock = new ManualClock(at("15:00"));
  const { ctx, fdb } = await fleetContext(db, fleetClock);
  const app = await createFleetApp(ctx);
  await app.ready();
  try {
    const u = simUnit("vm-g85");
    await send(app, u.key, "POST", "/enroll", { unitId: u.id, label: "lobby" }, fleetClock.now());
    expect(await approveUnit(ctx, u.id, "manager")).toBe("done");
    const clock = new ManualClock(at("01:00"));
    const j = openSqliteJournal({ path: ":memory:", unitId: u.id, clock, outbox: { currency: "EUR" } });
    const machine = new DexMachine({
      commId: "SIM0000001",
      serial: "SIM000000001",
      selections: DEFAULT_SELECTIONS,
    });
    const read = (readId: string, hhmm: string, corrupt: boolean) => {
      clock.advance(at(hhmm) - clock.now());
      let raw = machine.auditFile(new Date(clock.now()));
      machine.readCompleted();
      // a bit flipped in transit inside the cashless line: the blocks' CRCs were fine, G85 no longer matches
      if (corrupt) raw = raw.replace(/\r\nDA2\*(\d+)\*/, "\r\nDA2*9$1*");
      const report = parseEvaDts(raw);
      expect(report.check.g85).toBe(corrupt ? "bad" : "ok");
      j.recordDexRead({
        readId,
        at: clock.now(),
        trigger: "schedule",
        outcome: "ok",
        role: "master",
        attempts: 1,
        raw,
        counters: countersOf(report),
        g85: report.check.g85,
        warnings: 0,
        error: null,
      });
    };
    const vend = (i: number, hhmm: string) => {
      clock.advance(at(hhmm) - clock.now());
      journalSale(j, { id: `s${i}`, item: 11, price: 150, driver: "v10", paymentId: "order" });
      machine.vend("11", "DA");
    };
    read("read-0200", "02:00", false);
    vend(1, "03:00");
    vend(2, "04:00");
    read("read-0800", "08:00", true);
    vend(3, "09:00");
    vend(4, "10:00");
    read("read-1400", "14:00", lastBad);
    const events = j.outboxPending(1000);
    j.close();
    expect(
      (await send(app, u.key, "POST", "/events", { unitId: u.id, events }, fleetClock.now())).status,
    ).toBe(200);
    const sales = await ctx.db.selectFrom("sales").selectAll().orderBy("closed_at").execute();
    const lines = sales.map((s) => ({
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
    await saveRun(
      ctx.db,
      reconcile({ from: DAY, to: DAY, sales, lines, transfers: [], timeZone: "UTC" }),
      fleetClock.now(),
    );
    const stored = await ctx.db.selectFrom("dex_reads").select(["read_id", "g85"]).orderBy("at").execute();
    return { stored, report: await loadDexReport(ctx.db, { from: DAY, to: DAY, timeZone: "UTC" }) };
  } finally {
    await app.close();
    await fdb.close();
  }
}

const cli = (args: string[]) =>
  run(process.execPath, ["dist/src/cli/main.js", ...args], {
    env: { ...process.env, VENDD_FLEET_TZ: "UTC" },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
const dexCsv = (db: string) =>
  cli(["fleet", "reconcile", "--dex", "--from", DAY, "--to", DAY, "--db", db, "--format", "csv"]);

describe("a DEX read whose G85 check fails: kept, unverified", () => {
  it("the fleet stores the flag; the window runs to the next verified read, with no difference", async () => {
    requireBuiltCli();
    const db = join(dir.path, "middle.db");
    const { stored, report } = await fleetDay(db, false);
    expect(stored).toEqual([
      { read_id: "read-0200", g85: "ok" },
      { read_id: "read-0800", g85: "bad" },
      { read_id: "read-1400", g85: "ok" },
    ]);
    expect(report.clean).toBe(true);
    const rows = dexRows(report);
    // one window from the baseline to the next verified read: the machine's 4 vends against the unit's 4
    expect(rows.map((r) => [r.fromRead, r.toRead, r.class, r.dexCount, r.journalCount])).toEqual([
      ["read-0200", "read-1400", "unverified", 4, 4],
    ]);
    expect(rows[0]?.note).toContain("unverified (G85): read read-0800 at 2026-11-27T08:00:00Z skipped");
    const out = await dexCsv(db);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("read-0200,read-1400,unverified,0,0,EUR,4,600,4,600,4,600");
    expect(out.stdout).not.toMatch(/machineNotUnit|capturedNoVend|counterReset/);
  }, 60_000);

  it("an unverified last read: no difference, no counter reset, the report says it waits for a verified read", async () => {
    requireBuiltCli();
    const db = join(dir.path, "last.db");
    const { report } = await fleetDay(db, true);
    expect(report.clean).toBe(true);
    const table = await cli(["fleet", "reconcile", "--dex", "--from", DAY, "--to", DAY, "--db", db]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(
      "(UTC): machine, units and payment service agree; reads unverified (G85) not compared\n",
    );
    expect(table.stdout).toContain(
      "unverified (G85): the counters of read read-0800 at 2026-11-27T08:00:00Z, read-1400 at 2026-11-27T14:00:00Z are not compared",
    );
    expect(table.stdout).toContain("the next verified read bounds the window");
    expect(table.stdout).not.toMatch(/machineNotUnit|capturedNoVend|counterReset/);
  }, 60_000);

  it("a manager marks a machine whose G85 is always wrong: its reads are used, and the report says so", async () => {
    requireBuiltCli();
    const db = join(dir.path, "marked.db");
    await fleetDay(db, false);
    const usage = await cli(["fleet", "dex-g85", "--unit", "vm-g85", "--db", db]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--by NAME and --reason TEXT");
    const unknown = await cli([
      "fleet",
      "dex-g85",
      "--unit",
      "nope",
      "--by",
      "ana",
      "--reason",
      "x",
      "--db",
      db,
    ]);
    expect(unknown.code).toBe(1);
    const mark = await cli([
      "fleet",
      "dex-g85",
      "--unit",
      "vm-g85",
      "--by",
      "ana",
      "--reason",
      "firmware 1.2 writes G85 byte-swapped",
      "--db",
      db,
    ]);
    expect(mark.code).toBe(0);
    // the garbled read is now an edge: its counters are compared, and every row it touches says so
    const out = await dexCsv(db);
    expect(out.code).toBe(1);
    expect(out.stdout).toContain("read-0200,read-0800,machineNotUnit");
    expect(out.stdout).toContain(
      "unverified (G85): read read-0800 used as it is; ana marked this machine's G85 as always wrong on",
    );
    expect(out.stdout).toContain("firmware 1.2 writes G85 byte-swapped");
    // the /dex page names the mark, who made it and why
    const { ctx, fdb } = await fleetContext(db, new ManualClock(Date.parse(`${DAY}T23:00:00Z`)));
    try {
      const page = renderDexPage(
        await loadDexReport(ctx.db, { from: DAY, to: DAY, timeZone: "UTC" }),
      ).toString();
      expect(page).toContain("G85 always wrong</td><td>ana</td>");
      expect(page).toContain("firmware 1.2 writes G85 byte-swapped");
      expect(page).toContain("unverified (G85)");
      // and the unit's page: its latest read and the mark
      const detail = await unitDetail(ctx, "vm-g85");
      expect(detail?.dex?.g85Mark).toMatchObject({
        by: "ana",
        reason: "firmware 1.2 writes G85 byte-swapped",
      });
      const session = { id: "s", userId: 1, username: "ana", role: "manager" as const, csrf: "c" };
      const unit = detail === null ? "" : unitPage({ session, timeZone: "UTC", now: Date.now() }, detail);
      expect(unit).toMatch(/DEX audit<\/th><td>last read [^<]*: ok, G85 ok/);
      expect(unit).toContain('<span class="warn">G85 always wrong</span> (marked by ana on');
    } finally {
      await fdb.close();
    }
    expect((await cli(["fleet", "dex-g85", "--unit", "vm-g85", "--clear", "--db", db])).code).toBe(0);
    expect((await dexCsv(db)).code).toBe(0);
  }, 60_000);
});
