/**
 * Issue 31, defect 2: a badge tap and a fast selection race. The member's card is presented at the sim
 * reader (the real station and peripherals wiring), and the VMC's vend request comes 0, 50, 200 and 500 ms
 * later (real time) while the event loop and the thread pool are loaded, so the badge's hash is still
 * running when the request arrives. The request waits for the tap (bounded: TAP_WAIT_MS) and becomes the
 * member's plan vend, never a paid one. The bound itself is checked on the ManualClock.
 */
import { scrypt } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSimNfcStation, SimTag } from "../../drivers/nfc/sim.js";
import { buildConfig } from "../config/load.js";
import { PLAN_DRIVER } from "../journal/journal.js";
import { signEntitlements } from "../update/entitlements.js";
import {
  capture,
  entKey,
  list,
  planUnit,
  stopUnit,
  tempDir,
  UID,
  useEntitlementFixtures,
} from "./entitlements.test-support.js";
import { TAP_WAIT_MS } from "./memberGate.js";
import { startPeripherals } from "./peripherals.js";

useEntitlementFixtures();

const config = buildConfig({
  unit: { id: "vm-test", name: "Race" },
  payment: {
    driver: "v10",
    v10: {
      baseUrl: "http://127.0.0.1:1",
      tokenUrl: "http://127.0.0.1:1/t",
      clientId: "c",
      merchantVat: "DK12345678",
      storeId: "6f1c2d3e-0000-4000-8000-000000000001",
    },
  },
  nfc: { enabled: true, kind: "sim" },
});

const HASH = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const hashJob = (i: number) =>
  new Promise<number>((resolve) => {
    const t0 = performance.now();
    scrypt(`load-${i}`, "salt", 32, HASH, () => resolve(performance.now() - t0));
  });

/**
 * Loads the unit as a busy one is: the main thread busy 12 ms of every 16, and the thread pool given
 * enough scrypt jobs that the badge's hash (queued behind them) ends about `busyMs` from now.
 */
async function load(busyMs: number): Promise<() => Promise<void>> {
  // The pool's throughput now (4 jobs at once: its size), so the queue ahead of the badge lasts busyMs.
  const t0 = performance.now();
  await Promise.all([0, 1, 2, 3].map((i) => hashJob(-1 - i)));
  const perJob = (performance.now() - t0) / 4;
  const jobs = Math.max(1, Math.round(busyMs / perJob));
  const pool = Promise.all(Array.from({ length: jobs }, (_, i) => hashJob(i)));
  const loop = setInterval(() => {
    const end = performance.now() + 12;
    while (performance.now() < end) {}
  }, 16);
  return async () => {
    clearInterval(loop);
    await pool;
  };
}

async function raceUnit() {
  const dir = tempDir();
  writeFileSync(join(dir, "entitlements.json"), JSON.stringify(signEntitlements(list({}, 10), entKey.sk)));
  const { logger, lines } = capture();
  const u = await planUnit({ dir, logger });
  const nfc = createSimNfcStation({ clock: u.clock, badges: [] });
  const peripherals = await startPeripherals(config, {
    clock: u.clock,
    logger,
    engine: { pos: null, setOutOfService: async () => {} },
    gpio: null,
    members: u.gate,
    devices: { nfc },
  });
  const reader = nfc.sim.plug();
  return { u, reader, peripherals, lines };
}

describe("a badge tap and a fast selection (issue 31)", () => {
  it("the selection 0, 50, 200 and 500 ms after the tap on a loaded unit is the member's plan vend", async () => {
    const { u, reader, peripherals } = await raceUnit();
    try {
      for (const delayMs of [0, 50, 200, 500]) {
        const done = await load(delayMs + 500);
        const before = u.vmc.vends.length;
        reader.present(new SimTag(UID));
        await new Promise((r) => setTimeout(r, delayMs));
        // The race is real: the tap is still being handled when the request comes.
        expect(u.gate.settling(), `tap decided before the selection at ${delayMs} ms`).not.toBeNull();
        u.vmc.requestVend(12, 150);
        const t0 = Date.now();
        while (u.engine.current.tag === "idle" && u.vmc.vends.length === before) {
          if (Date.now() - t0 > 10_000) throw new Error("the vend request was never taken");
          await new Promise((r) => setTimeout(r, 5));
        }
        await done();
        reader.remove();
        await u.run(30_000);
        expect(u.vmc.vends.at(-1), `selection ${delayMs} ms after the tap`).toMatchObject({
          price: 150,
          result: "delivered",
        });
        expect(u.journal.sessions({ limit: 1 })[0]?.driver, `selection ${delayMs} ms after the tap`).toBe(
          PLAN_DRIVER,
        );
      }
      expect(u.payment.ledger).toEqual([]);
      expect(u.payment.calls).toEqual([]);
    } finally {
      await peripherals.close();
      await stopUnit(u);
    }
  }, 120_000);

  it("waits at most TAP_WAIT_MS for a tap that does not end (virtual time), then the normal flow", async () => {
    const { u, peripherals } = await raceUnit();
    try {
      let finish: () => void = () => {};
      u.gate.tapStarted(new Promise<void>((r) => (finish = r)));
      u.vmc.requestVend(12, 150);
      await u.clock.advanceAsync(TAP_WAIT_MS - 1, 100);
      expect(u.engine.current.tag).toBe("idle");
      expect(u.vmc.vends).toEqual([]);
      await u.clock.advanceAsync(1, 1);
      await new Promise((r) => setTimeout(r, 10));
      // No tap decided: the request goes on as a paid one.
      expect(u.engine.current.tag).toBe("paying");
      finish();
      await u.run();
      expect(u.vmc.vends.at(-1)).toMatchObject({ result: "delivered" });
      expect(u.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
    } finally {
      await peripherals.close();
      await stopUnit(u);
    }
  }, 60_000);
});
