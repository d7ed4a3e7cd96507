/**
 * Issue 42: the pause between the first and the second handshake (dex.md §2 timers: at least 100 ms after
 * the other side's EOT before an ENQ opens the next handshake). The built `vendd run` reads the simulated
 * machine over a socat PTY at its start, in both first-handshake roles; the simulator records the wire with
 * times. As slave (the machine sent the first ENQ), the unit's ENQ comes at least 100 ms after the machine's
 * EOT; as master, the machine (the simulator) keeps the same pause after the unit's EOT and the read works.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { WireEvent } from "../../drivers/dex/simulator/index.js";
import { hashPin } from "../../src/core/pin.js";
import { CANARY_PIN } from "../support/console.js";
import { HAVE_SOCAT } from "../support/daemon.js";
import { unitWithDex } from "../support/dexUnit.js";

const DLE = 0x10;
const EOT = 0x04;
const ENQ = 0x05;

let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const is = (e: WireEvent, dir: WireEvent["dir"], ...bytes: number[]) =>
  e.dir === dir && e.bytes.equals(Buffer.from(bytes));

/**
 * The gap between the EOT that ends the first handshake and the ENQ that opens the second, as the machine
 * sees the wire. Machine first (`master`): its DLE 1 from the unit, its EOT (one write), the unit's ENQ.
 * Unit first: the machine's DLE 1, the unit's EOT, the machine's ENQ (one write).
 */
function firstGap(trace: readonly WireEvent[], machineRole: "master" | "slave"): number {
  if (machineRole === "master") {
    const eot = trace.findIndex((e) => is(e, "tx", EOT));
    const enq = trace.findIndex((e, i) => i > eot && e.dir === "rx" && e.bytes.includes(ENQ));
    const a = trace[eot];
    const b = trace[enq];
    if (eot < 0 || !a || !b) throw new Error("no first handshake in the trace");
    return b.at - a.at;
  }
  const ack1 = trace.findIndex((e) => is(e, "tx", DLE, 0x31));
  const eot = trace.findIndex((e, i) => i > ack1 && e.dir === "rx" && e.bytes.includes(EOT));
  const enq = trace.findIndex((e, i) => i > eot && is(e, "tx", ENQ));
  const a = trace[eot];
  const b = trace[enq];
  if (ack1 < 0 || !a || !b) throw new Error("no first handshake in the trace");
  return b.at - a.at;
}

describe.skipIf(!HAVE_SOCAT)("the pause between the handshakes, in both first-handshake roles", () => {
  it.each([
    ["master", "slave"],
    ["slave", "master"],
  ] as const)(
    "the machine as %s (the unit %s): at least 100 ms after EOT before the next ENQ, and the read works",
    async (machineRole, _unitRole) => {
      const u = await unitWithDex(cleanups, pinHash, {
        prefix: "vendd-dex-turn-",
        role: machineRole,
        trace: true,
      });
      await expect.poll(() => u.sim.machine.reads, { timeout: 20_000 }).toBe(1);
      const gap = firstGap(u.sim.trace, machineRole);
      expect(gap).toBeGreaterThanOrEqual(100);
      // and not a stall: well inside Timer A
      expect(gap).toBeLessThan(1000);
      expect(u.sim.vmd.stats.failed).toBe(0);
    },
    90_000,
  );
});
