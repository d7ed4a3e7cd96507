import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { DexError } from "../../drivers/dex/protocol.js";
import { DEFAULT_SELECTIONS } from "../../drivers/dex/simulator/index.js";
import { DexMachine } from "../../drivers/dex/simulator/machine.js";
import { VmcError } from "../../drivers/vmc/controller.js";
import { ManualClock } from "../core/clock.js";
import { openSqliteJournal } from "../journal/sqlite.js";
import { type DexReaderLike, DexReads, nextReadAt, VEND_IN_PROGRESS } from "./dexReads.js";

const NOON = Date.UTC(2026, 10, 28, 12, 0, 0);

function rig(opts: { fail?: boolean; busyError?: Error } = {}) {
  const clock = new ManualClock(NOON);
  const journal = openSqliteJournal({ path: ":memory:", unitId: "vm-dex", clock });
  const machine = new DexMachine({
    commId: "SIM0000001",
    serial: "SIM000000001",
    selections: DEFAULT_SELECTIONS,
  });
  const log: string[] = [];
  let idle = true;
  let activity: (event?: { type: string }) => void = () => {};
  const reader: DexReaderLike = {
    async read() {
      log.push(`read@${clock.now() - NOON}`);
      if (opts.fail) throw new DexError("silent", "the machine did not answer ENQ (3 tries, Timer A each)");
      const data = Buffer.from(machine.auditFile(new Date(clock.now())), "latin1");
      machine.readCompleted();
      return { role: "master", data, attempts: 1 };
    },
    close: async () => undefined,
  };
  const reads = new DexReads({
    config: {
      enabled: true,
      device: "/dev/null",
      commId: "VND0000001",
      schedule: ["02:00", "14:00"],
      timeZone: "Europe/Copenhagen",
      quietSeconds: 10,
      attempts: 3,
    },
    clock,
    logger: pino({ level: "silent" }),
    store: journal.dex(),
    openReader: async () => reader,
    engineIdle: () => idle,
    setBusy: async (busy) => {
      log.push(`busy=${busy}@${clock.now() - NOON}`);
      if (busy && opts.busyError) throw opts.busyError;
    },
    onVmcActivity: (l) => {
      activity = l;
      return () => undefined;
    },
  });
  return {
    clock,
    journal,
    machine,
    log,
    reads,
    setIdle: (v: boolean) => {
      idle = v;
    },
    vmcActivity: (type?: string) => activity(type === undefined ? undefined : { type }),
  };
}

describe("DEX reads in the daemon (issue 36)", () => {
  it("schedules HH:MM in the configured time zone", () => {
    // 12:00 UTC is 13:00 in Copenhagen (CET): the next is 14:00 local = 13:00 UTC, then 02:00 local = 01:00 UTC
    expect(new Date(nextReadAt(NOON, ["02:00", "14:00"], "Europe/Copenhagen")).toISOString()).toBe(
      "2026-11-28T13:00:00.000Z",
    );
    expect(
      new Date(nextReadAt(NOON + 3_600_000, ["02:00", "14:00"], "Europe/Copenhagen")).toISOString(),
    ).toBe("2026-11-29T01:00:00.000Z");
  });

  it("reads at the scheduled time, out of service while reading, and journals the raw file and counters", async () => {
    const r = rig();
    r.machine.vend("11", "DA");
    // read after the 02:00 slot already: nothing to catch up at start
    r.journal.recordDexRead({
      readId: "earlier",
      at: NOON - 60_000,
      trigger: "console",
      outcome: "ok",
      role: "master",
      attempts: 1,
      raw: null,
      counters: null,
      g85: null,
      warnings: 0,
      error: null,
    });
    r.reads.start();
    await r.clock.advanceAsync(3_600_000 - 1, 60_000);
    expect(r.log).toEqual([]);
    await r.clock.advanceAsync(2, 1);
    await r.clock.advanceAsync(10, 1);
    expect(r.log).toEqual(["busy=true@3600000", "read@3600000", "busy=false@3600000"]);
    const last = r.reads.last();
    expect(last).toMatchObject({
      trigger: "schedule",
      outcome: "ok",
      role: "master",
      g85: "ok",
      warnings: 0,
    });
    expect(last?.raw).toContain("DA2*150*1*150*1");
    expect(JSON.parse(last?.counters ?? "null")).toMatchObject({ cashless: { count: 1, value: 150 } });
    await r.reads.stop();
  });

  it("never starts during a vend or within quietSeconds of the VMC's last activity", async () => {
    const r = rig();
    r.setIdle(false);
    const done = r.reads.read("console");
    await r.clock.advanceAsync(5000, 100);
    expect(r.log).toEqual([]);
    r.vmcActivity(); // the vend ends at +5 s
    r.setIdle(true);
    await r.clock.advanceAsync(9000, 100);
    expect(r.log).toEqual([]);
    await r.clock.advanceAsync(2000, 100);
    await done;
    expect(r.log[0]).toMatch(/^busy=true@1[45]\d{3}$/);
    const readAt = Number(r.log[1]?.split("@")[1]);
    expect(readAt).toBeGreaterThanOrEqual(15_000);
    expect(r.reads.last()?.trigger).toBe("console");
    await r.reads.stop();
  });

  it("journals a failed read with the reason and goes back in service", async () => {
    const r = rig({ fail: true });
    const row = await r.reads.read("console");
    expect(row).toMatchObject({
      outcome: "failed",
      error: "the machine did not answer ENQ (3 tries, Timer A each)",
      raw: null,
    });
    expect(r.log).toEqual(["busy=true@0", "read@0", "busy=false@0"]);
    await r.reads.stop();
  });

  it("at start, reads a slot missed since (the unit was off or killed during the read); not one already read", async () => {
    const r = rig();
    // 12:00 UTC = 13:00 Copenhagen: the 02:00 slot (01:00 UTC) has no read in the journal
    r.reads.start();
    await r.clock.advanceAsync(10, 1);
    expect(r.log).toEqual(["busy=true@0", "read@0", "busy=false@0"]);
    await r.reads.stop();
    const again = new DexReads({ ...Reflect.get(r.reads, "deps") });
    again.start();
    await r.clock.advanceAsync(10, 1);
    expect(r.log).toHaveLength(3);
    await again.stop();
  });

  it("journals a machine's push of events (trigger push, raw file, no counters) and outboxes it once; reads ignore it", async () => {
    const clock = new ManualClock(NOON);
    const journal = openSqliteJournal({
      path: ":memory:",
      unitId: "vm-dex",
      clock,
      outbox: { currency: "EUR" },
    });
    const machine = new DexMachine({ commId: "SIM0000001", serial: "SIM000000001", selections: [] });
    machine.door({ date: "20261128", time: "1155" });
    const r = rig();
    const reads = new DexReads({
      ...Reflect.get(r.reads, "deps"),
      clock,
      store: { record: (read) => journal.recordDexRead(read), last: () => journal.dex().last() },
    });
    reads.recordPush({ ok: true, data: Buffer.from(machine.eventsFile(), "latin1") });
    clock.advance(1000);
    reads.recordPush({ ok: false, error: "no answer to block 2" });
    const push = journal.dex().lastPush();
    expect(push).toMatchObject({ trigger: "push", outcome: "failed", error: "no answer to block 2" });
    expect(journal.dex().count()).toBe(2);
    // a push is not a read: the missed-slot check and `dex last` see none
    expect(journal.dex().last()).toBeNull();
    expect(reads.last()).toBeNull();
    const events = journal.outboxPending(10).filter((e) => e.kind === "dex");
    expect(events).toHaveLength(2);
    const first = events[0]?.data as { trigger: string; outcome: string; raw: string; counters: unknown };
    expect(first).toMatchObject({ trigger: "push", outcome: "ok", counters: null });
    expect(first.raw).toContain("EA1*EGS*20261128*1155");
    await reads.stop();
    await r.reads.stop();
  });

  it("a read asked for while the machine owes a vend's outcome says a vend is in progress, then reads once it ends (issue 42)", async () => {
    const r = rig();
    // the engine is idle (it captured the vend by policy); the machine asked for a vend and never said how it ended
    r.vmcActivity("vendRequested");
    await r.clock.advanceAsync(60_000, 1000);
    const refused = await r.reads.read("console");
    expect(refused).toMatchObject({ outcome: "failed", error: VEND_IN_PROGRESS });
    expect(refused.error).not.toMatch(/state/);
    expect(r.log).toEqual([]);
    r.vmcActivity("vendSucceeded");
    const done = r.reads.read("console");
    await r.clock.advanceAsync(11_000, 500);
    expect(await done).toMatchObject({ outcome: "ok" });
    await r.reads.stop();
  });

  it("a machine that refuses to be switched off mid-vend: the read says a vend is in progress, the unit goes back in service (issue 42)", async () => {
    const r = rig({ busyError: new VmcError("state", "cannot switch off in state approved") });
    const done = r.reads.read("console");
    await r.clock.advanceAsync(1000, 100);
    const row = await done;
    expect(row).toMatchObject({ outcome: "failed", error: VEND_IN_PROGRESS });
    expect(r.log).toEqual(["busy=true@0", "busy=false@0"]);
    await r.reads.stop();
  });
});
