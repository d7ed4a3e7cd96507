/**
 * Issue 42: while a DEX read has the unit out of service, `status` says so. The built `vendd run` reads a
 * slowed simulated machine (socat PTY; each data block 250 ms late, so the read takes seconds) on the
 * technician console's `dex read`; the control socket's public `status` (what the update applier's health
 * gate and the console read), polled meanwhile, answers `inService: false` with the reason "reading the
 * machine's audit", and in service again after. The fleet link reports the same change (service events
 * to a signature-checking fleet double).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { controlRequest } from "../../src/core/controlClient.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { hashPin } from "../../src/core/pin.js";
import { CANARY_PIN, PtyConsole } from "../support/console.js";
import { HAVE_SOCAT } from "../support/daemon.js";
import { unitWithDex } from "../support/dexUnit.js";
import { FakeFleet } from "../support/fakeFleet.js";

let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

interface Status {
  inService: boolean;
  reasons: { code: string; detail: string }[];
}

describe.skipIf(!HAVE_SOCAT)("status during a DEX read", () => {
  it("says the unit is out of service, reading the machine's audit, and in service after", async () => {
    const fleet = await FakeFleet.start();
    cleanups.push(() => fleet.close());
    const u = await unitWithDex(cleanups, pinHash, {
      prefix: "vendd-dex-status-",
      extra: (dir) => {
        const keyFile = join(dir, "fleet.key");
        writeFileSync(keyFile, generateUnitKey().privatePem, { mode: 0o600 });
        return [`fleet: { url: "${fleet.url}", keyFile: ${keyFile}, heartbeatSeconds: 30 }`];
      },
    });
    await expect.poll(() => u.sim.machine.reads, { timeout: 20_000 }).toBe(1);
    const status = async () => (await controlRequest(u.socket, "status")) as Status;
    await expect.poll(async () => (await status()).inService, { timeout: 20_000 }).toBe(true);
    u.sim.vmd.faults.slowBlockMs = 250;
    const c = PtyConsole.start(u.socket, 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    const read = c.line("dex read", /\(console\): ok[\s\S]*vendd> /, 60_000);
    // polled while the read runs (the machine is sending its blocks)
    await expect.poll(async () => (await status()).inService, { timeout: 20_000, interval: 100 }).toBe(false);
    const during = await status();
    expect(u.sim.vmd.stats.blocksSent).toBeGreaterThan(0);
    expect(during.reasons).toEqual([
      { code: "dexRead", detail: "reading the machine's audit", retryAt: null },
    ]);
    await read;
    expect(u.sim.machine.reads).toBe(2);
    // the cashless device is enabled again after the read: in service, no reason left
    await expect.poll(async () => (await status()).inService, { timeout: 10_000 }).toBe(true);
    expect((await status()).reasons).toEqual([]);
    // what the fleet shows: the unit's service changes, out for the read and back
    await expect
      .poll(
        () =>
          fleet
            .stored("vm-c")
            .flatMap((e) => (e.kind === "service" ? [`${e.data.state}: ${e.data.reason}`] : []))
            .slice(-2),
        { timeout: 30_000 },
      )
      .toEqual(["outOfService: reading the machine's audit", "inService: "]);
  }, 120_000);
});
