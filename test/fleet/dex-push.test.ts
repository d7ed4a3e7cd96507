/**
 * A machine's push of events (issue 36): when the machine opens a DEX session by itself, the unit journals
 * what it pushed as a read of trigger `push` and puts it in the outbox; the fleet stores it once however often
 * the batch is sent again, lists its events on the DEX audits page, and never takes it for a window's read
 * (the day between the two audit reads stays one clean window).
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { DexMachine } from "../../drivers/dex/simulator/machine.js";
import { ManualClock } from "../../src/core/clock.js";
import { DexReads } from "../../src/daemon/dexReads.js";
import { loadDexReport } from "../../src/fleet/dex/load.js";
import { renderDexPage } from "../../src/fleet/dex/views.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { machineRead } from "../support/dex.js";
import { fleetContext, send, simUnit } from "../support/fleet.js";
import { postgresAndDir } from "../support/postgres.js";

const DAY = "2026-11-27";
const at = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`);
const files = postgresAndDir("vendd-dex-push-");

describe("a machine's push of events", () => {
  it("is journaled, reaches the fleet once, shows on the DEX page and is no window's read", async () => {
    const clock = new ManualClock(at("01:00"));
    const j = openSqliteJournal({ path: ":memory:", unitId: "vm-push", clock, outbox: { currency: "EUR" } });
    const machine = new DexMachine({ commId: "SIM0000001", serial: "SIM000000001", selections: [] });
    const read = (readId: string, hhmm: string) => {
      clock.advance(at(hhmm) - clock.now());
      j.recordDexRead(machineRead(machine, readId, clock.now()));
    };
    const reads = new DexReads({
      config: {
        enabled: true,
        device: "/dev/null",
        commId: "VND0000001",
        schedule: ["02:00", "14:00"],
        timeZone: "UTC",
        quietSeconds: 10,
        attempts: 3,
      },
      clock,
      logger: pino({ level: "silent" }),
      store: { record: (r) => j.recordDexRead(r), last: () => j.dex().last() },
      openReader: async () => {
        throw new Error("no reader in this test");
      },
      engineIdle: () => true,
      setBusy: async () => undefined,
      onVmcActivity: () => () => undefined,
    });
    read("read-0200", "02:00");
    clock.advance(at("09:30") - clock.now());
    machine.door({ date: "20261127", time: "0930" });
    reads.recordPush({ ok: true, data: Buffer.from(machine.eventsFile(), "latin1") });
    read("read-1400", "14:00");
    const events = j.outboxPending(100);
    j.close();
    await reads.stop();
    expect(events.map((e) => [e.kind, (e.data as { trigger?: string }).trigger])).toEqual([
      ["dex", "schedule"],
      ["dex", "push"],
      ["dex", "schedule"],
    ]);

    const { ctx, fdb } = await fleetContext(`${files.dir}/push.db`, clock);
    const app = await createFleetApp(ctx);
    await app.ready();
    try {
      const u = simUnit("vm-push");
      await send(app, u.key, "POST", "/enroll", { unitId: u.id, label: "lobby" }, clock.now());
      expect(await approveUnit(ctx, u.id, "manager")).toBe("done");
      // the batch is sent twice (a lost answer): the fleet holds each read and the push once
      for (let i = 0; i < 2; i++)
        expect(
          (await send(app, u.key, "POST", "/events", { unitId: u.id, events }, clock.now())).status,
        ).toBe(200);
      const stored = await ctx.db.selectFrom("dex_reads").select(["trigger"]).orderBy("at").execute();
      expect(stored.map((r) => r.trigger)).toEqual(["schedule", "push", "schedule"]);
      const report = await loadDexReport(ctx.db, { from: DAY, to: DAY, timeZone: "UTC" });
      expect(report.clean).toBe(true);
      expect(report.units[0]?.windows).toHaveLength(1);
      expect(report.pushes).toMatchObject([
        {
          unit: "vm-push",
          at: at("09:30"),
          outcome: "ok",
          events: ["EA1*EGS*20261127*0930", "EA2*EGS*1*1**0"],
        },
      ]);
      const page = String(renderDexPage(report));
      expect(page).toContain("Events the machines pushed");
      expect(page).toContain("<code>EA1*EGS*20261127*0930</code><br>");
    } finally {
      await app.close();
      await fdb.close();
    }
  }, 60_000);
});
