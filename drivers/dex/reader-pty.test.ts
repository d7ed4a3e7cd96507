/**
 * The DEX reader against the VMC-side simulator over real PTYs (socat), in both first-handshake roles and
 * with each fault: a read completes or fails cleanly, the port stays usable, and the simulated machine's
 * since-initialisation counters never reset (its interval counters reset only after a completed read, as
 * AUTO mode does). Real timers of the standard throughout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { socatAvailable } from "../vmc/simulator/pty.js";
import { parseEvaDts } from "./evadts.js";
import { type DexPushResult, DexReader } from "./reader.js";
import { type DexSimulator, startDexSimulator } from "./simulator/index.js";

const HAVE_SOCAT = socatAvailable();
if (!HAVE_SOCAT) console.warn("socat not installed: DEX PTY tests skipped (apt-get install socat)");

let dir = "";
let sim: DexSimulator | null = null;
let reader: DexReader | null = null;
let pushes: DexPushResult[] = [];

async function setUp(role: "slave" | "master"): Promise<{ sim: DexSimulator; reader: DexReader }> {
  sim = await startDexSimulator({ linkPath: join(dir, "dex"), role });
  pushes = [];
  reader = await DexReader.open({
    path: sim.devicePath,
    commId: "VND0000001",
    clock: systemClock,
    attempts: 2,
    backoffMs: 200,
    onPush: (r) => pushes.push(r),
  });
  return { sim, reader };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-dex-"));
});

afterEach(async () => {
  await reader?.close();
  await sim?.close();
  reader = null;
  sim = null;
  rmSync(dir, { recursive: true, force: true });
});

function vendSome(s: DexSimulator): void {
  s.machine.vend("11", "DA");
  s.machine.vend("12", "CA");
  s.machine.vend("12", "DA");
}

describe.skipIf(!HAVE_SOCAT)("DEX reader over a PTY against the simulator", () => {
  for (const role of ["slave", "master"] as const) {
    it(`reads the audit file when the machine is ${role} in the first handshake`, async () => {
      const { sim: s, reader: r } = await setUp(role);
      vendSome(s);
      const read = await r.read();
      expect(read.role).toBe(role === "slave" ? "master" : "slave");
      expect(read.op).toBe(role === "slave" ? "R" : "S");
      expect(read.vmdCommId).toBe("SIM0000001");
      const report = parseEvaDts(read.data ?? Buffer.alloc(0));
      expect(report.check.g85).toBe("ok");
      expect(report.warnings).toEqual([]);
      expect(report.cashless1.sales).toMatchObject({ valueInit: 420, countInit: 2 });
      expect(report.cash.sales).toMatchObject({ valueInit: 270, countInit: 1 });
      expect(read.blocks).toBe(report.segments.length);
      expect(s.machine.configRequests).toBe(0);
      // a second read sees the since-init counters kept and the interval ones reset after the first read
      s.machine.vend("13", "DA");
      const again = parseEvaDts((await r.read()).data ?? Buffer.alloc(0));
      expect(again.cashless1.sales).toEqual({ valueInit: 620, countInit: 3, valueReset: 200, countReset: 1 });
      expect(s.machine.reads).toBe(2);
    });
  }

  it("recovers from a corrupted block with one NAK and the read completes", async () => {
    const { sim: s, reader: r } = await setUp("slave");
    vendSome(s);
    s.vmd.faults.corruptBlock = 5;
    const read = await r.read();
    expect(read.naks).toBe(1);
    expect(s.vmd.stats.naksReceived).toBe(1);
    expect(parseEvaDts(read.data ?? Buffer.alloc(0)).check.g85).toBe("ok");
  });

  it("resends its handshake after the machine NAKs it", async () => {
    const { sim: s, reader: r } = await setUp("slave");
    s.vmd.faults.nakHandshake = true;
    const read = await r.read();
    expect(read.data?.length).toBeGreaterThan(0);
    expect(s.vmd.faults.nakHandshake).toBe(false);
  });

  it("fails cleanly on a block that is always corrupt, without resetting anything, and reads after", async () => {
    const { sim: s, reader: r } = await setUp("slave");
    vendSome(s);
    s.vmd.faults.corruptAlways = true;
    await expect(r.read()).rejects.toMatchObject({ name: "DexError", code: "crc" });
    expect(s.machine.reads).toBe(0);
    expect(s.machine.intervalResets).toBe(0);
    expect(s.machine.totals()).toEqual({ vends: 3, value: 690, cashless: 420, cash: 270 });
    s.vmd.faults.corruptAlways = false;
    const read = await r.read();
    expect(parseEvaDts(read.data ?? Buffer.alloc(0)).cashless1.sales?.valueReset).toBe(420);
  });

  it("fails cleanly on a silent machine (Timer A, bounded tries) and reads once it answers", async () => {
    const { sim: s, reader: r } = await setUp("slave");
    s.vmd.faults.silent = true;
    const t0 = Date.now();
    await expect(r.read()).rejects.toMatchObject({ code: "silent" });
    // 2 attempts x 3 ENQ x Timer A (1 s) + backoff: bounded, far under the 60 s line limit
    expect(Date.now() - t0).toBeLessThan(10_000);
    s.vmd.faults.silent = false;
    expect((await r.read()).blocks).toBeGreaterThan(10);
  }, 20_000);

  it("answers a machine that opens a session by itself to push events, then still reads", async () => {
    const { sim: s, reader: r } = await setUp("slave");
    s.machine.door({ date: "20261128", time: "1200" });
    expect(await s.vmd.push()).toBe(true);
    await expect.poll(() => pushes.length).toBe(1);
    const push = pushes[0];
    expect(push?.ok).toBe(true);
    if (!push?.ok) return;
    expect(push.session.role).toBe("slave");
    expect(push.session.op).toBe("S");
    const events = parseEvaDts(push.session.data ?? Buffer.alloc(0));
    expect(events.events).toEqual([{ code: "EGS", date: "20261128", time: "1200", durationMin: null }]);
    expect(s.machine.reads).toBe(0); // an events push is not an audit read
    expect((await r.read()).role).toBe("master");
  });

  it("shakes hands only (doctor): no data read, nothing counted as a read", async () => {
    const { sim: s, reader: r } = await setUp("slave");
    const hs = await r.read(true);
    expect(hs.data).toBeNull();
    expect(hs.vmdCommId).toBe("SIM0000001");
    expect(s.machine.reads).toBe(0);
  });
});
