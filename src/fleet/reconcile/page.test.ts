import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  consentRefreshToken,
  EPOCH,
  emulatorEndpoints,
  insertSales,
  seedDay,
} from "../../../scripts/reconcileDay.js";
import { ManualClock } from "../../core/clock.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import type { FleetContext } from "../context.js";
import { openFleetDb } from "../database.js";
import type { FleetDb } from "../db/open.js";
import { startNightlyReconcile } from "./nightly.js";
import type { ReportingSettings } from "./settings.js";
import { getRun, listRuns, runDays, runLines, runUnits } from "./store.js";
import { renderLinesPage, renderRunPage, renderRunsPage } from "./views.js";

/**
 * The nightly run (croner, in the fleet's time zone) reconciles yesterday and stores it; the dashboard's data
 * functions read the stored run back per day, per unit and per line, and the renderers escape what they show.
 */
describe("nightly reconciliation and the dashboard's data and pages", () => {
  let emu: Emulator;
  let fleet: FleetDb;
  let ctx: FleetContext;
  let settings: ReportingSettings;
  const saved: string[] = [];

  beforeAll(async () => {
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse("2026-11-24T00:00:00Z") });
    const day = seedDay(emu, { vends: 120, units: 3, prefix: "<b>u", stepMs: 120_000 });
    emu.recordLedger({
      interface: "v10",
      merchant: emu.info.v10.merchantVat,
      point: emu.info.v10.storeId,
      id: "x",
      paymentId: null,
      orderId: `<b>u1-${EPOCH}-999`,
      kind: "captured",
      amount: 700,
    });
    emu.reporting.advanceToCutoff();
    fleet = await openFleetDb(":memory:");
    await insertSales(fleet.db, day.rows);
    let refreshToken = await consentRefreshToken(emu);
    settings = {
      credentials: {
        ...emulatorEndpoints(emu),
        clientId: emu.info.reporting.clientId,
        clientSecret: emu.info.reporting.clientSecret,
        get refreshToken() {
          return refreshToken;
        },
      },
      timeZone: null,
      paymentPoints: null,
      points: new Map(),
      persistable: true,
      saveRefreshToken: (t) => {
        refreshToken = t;
        saved.push(t);
      },
    };
    ctx = {
      db: fleet.db,
      dialect: fleet.dialect,
      clock: new ManualClock(Date.parse("2026-11-25T03:30:00Z")),
      logger: pino({ level: "silent" }),
      timeZone: "UTC",
    };
  }, 30_000);
  afterAll(async () => {
    await fleet?.close();
    await emu?.close();
  });

  it("the nightly job is scheduled in the fleet's time zone and reconciles yesterday", async () => {
    const nightly = startNightlyReconcile({ ...ctx, timeZone: "Europe/Oslo" }, { settings });
    const next = nightly.nextRun();
    expect(next).not.toBeNull();
    // 04:30 in Oslo is 03:30 UTC in November.
    expect(next?.toISOString().slice(11, 19)).toBe("03:30:00");
    nightly.stop();
    expect(nightly.nextRun()).toBeNull();

    const job = startNightlyReconcile(ctx, { settings });
    const [a, b] = await Promise.all([job.runNow(), job.runNow()]); // no overlapping runs
    job.stop();
    expect(a).toBe(b);
    if ("error" in a) throw new Error(a.error);
    expect(a.result.from).toBe("2026-11-24");
    expect(a.result.counts.matched).toBe(120);
    expect(a.result.counts.unknownInFleet).toBe(1);
    expect(a.result.clean).toBe(false);
    expect(saved.length).toBe(1);
  });

  it("runs, days, units and lines read back; pages escape what they show", async () => {
    const runs = await listRuns(fleet.db);
    expect(runs).toHaveLength(1);
    const run = await getRun(fleet.db, runs[0]?.id ?? 0);
    if (run === null) throw new Error("no run");
    expect(run).toMatchObject({ from: "2026-11-24", to: "2026-11-24", clean: false });
    const days = await runDays(fleet.db, run);
    expect(days).toHaveLength(1);
    const d = days[0];
    expect(d?.day).toBe("2026-11-24");
    expect(d?.transfers).toHaveLength(1);
    // Issue 30: the transfer equals its own contents (the unknown payment's 7.00 included); the unknown
    // payment is reported once, on its own line, not again as a transfer difference.
    expect(d?.difference).toBe(0);
    expect(d?.received).toBe(d?.expected);
    expect(d?.currency).toBe("DKK");
    expect(d?.problems).toBe(1);

    const bad = await runLines(fleet.db, run.id, { day: "2026-11-24" });
    expect(bad.map((l) => l.class).sort()).toEqual(["unknownInFleet"]);
    expect(bad[0]).toMatchObject({ reported: 700, currency: "DKK" });
    expect(bad.find((l) => l.class === "unknownInFleet")?.unit_id).toBe("<b>u1");
    const all = await runLines(fleet.db, run.id, { all: true, unit: "<b>u1" });
    expect(all.filter((l) => l.class === "matched")).toHaveLength(40);
    const units = await runUnits(fleet.db, run.id, "2026-11-24");
    expect(units[0]).toMatchObject({ unit: "<b>u1", problems: 1 });

    const pages = [
      renderRunsPage(runs).value,
      renderRunPage(run, days).value,
      renderLinesPage(run, bad, units, { day: "2026-11-24" }).value,
    ];
    expect(pages[0]).toContain(`href="/reconcile/${run.id}"`);
    expect(pages[2]).toContain("7.00");
    expect(pages[1]).toContain(`/reconcile/${run.id}/lines?day=2026-11-24`);
    expect(pages[2]).toContain("&lt;b&gt;u1");
    for (const p of pages) expect(p).not.toContain("<b>u");
  });
});
