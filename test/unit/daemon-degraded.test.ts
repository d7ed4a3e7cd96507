import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { VmcError } from "../../drivers/vmc/controller.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { DEFAULT_MERCHANT } from "../../src/emulator/seed.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { emulatorDriver, pollUntil } from "../../src/payment/v10/emulator.test-support.js";
import {
  closedPort,
  startTestDaemon,
  type TestDaemon,
  tempDir,
  type V10Target,
  v10Unit,
} from "../support/inprocess.js";

const CLIENT = { clientId: "degraded-client", clientSecret: "degraded-secret-4f1c" };
const SEED = { integrators: [CLIENT] };

let dir: string;
let emu: Emulator | undefined;
let unit: TestDaemon | undefined;

afterEach(async () => {
  await unit?.daemon.stop();
  unit = undefined;
  await emu?.close();
  emu = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function target(port: number, secret = CLIENT.clientSecret): V10Target {
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    tokenUrl: `http://127.0.0.1:${port}/integrator-authentication/connect/token`,
    clientId: CLIENT.clientId,
    clientSecret: secret,
    merchantVat: DEFAULT_MERCHANT.vat,
    merchantBrandId: DEFAULT_MERCHANT.merchantBrandId,
    merchantLocationId: DEFAULT_MERCHANT.merchantLocationId,
  };
}

/** True once `p` has settled (it must not, for a daemon that keeps running). */
function settled(p: Promise<unknown>): () => boolean {
  let done = false;
  void p.then(() => {
    done = true;
  });
  return () => done;
}

describe("payment service unreachable at start-up: the daemon degrades instead of crash-looping", () => {
  it("connection refused: stays up out of service for a minute, backs off, goes in service when the service comes back", async () => {
    dir = tempDir();
    const port = await closedPort();
    unit = await startTestDaemon(v10Unit(dir, "vm-down", target(port)), {
      deps: { policy: { baseDelayMs: 1000, maxDelayMs: 8000 } },
    });
    const u = unit;
    const delays: number[] = [];
    u.daemon.onStatus((s) => {
      const r = s.reasons.find((x) => x.code === "paymentUnreachable");
      if (r?.retryAt != null) delays.push(r.retryAt - u.clock.now());
    });
    const failed = settled(u.daemon.failed);
    await u.until(() => u.codes().includes("paymentUnreachable"), 10_000, "out of service");
    // READY once, with a STATUS that says what is wrong; the screen says it too; the VMC stays off.
    expect(u.notifier.readies).toHaveLength(1);
    expect(u.notifier.readies[0]).toMatch(/^out of service: payment service unreachable/);
    await u.advance(60_000);
    expect(failed()).toBe(false);
    expect(u.daemon.status().inService).toBe(false);
    expect(u.codes()).toEqual(["paymentUnreachable"]);
    expect(u.display.last()).toEqual({ kind: "outOfService", reason: "Payment service unreachable" });
    expect(u.vmc.status).toBe("disabled");
    expect(u.enabledWithUnresolved).toEqual([]);
    expect(u.daemon.engine).toBeNull();
    // Capped exponential backoff with jitter (random 0.5: 3/4 of each capped delay): 750, 1500, ... 6000.
    expect(delays.length).toBeGreaterThanOrEqual(8);
    expect(delays.slice(0, 4)).toEqual([750, 1500, 3000, 6000]);
    expect(Math.max(...delays)).toBe(6000);
    expect(u.notifier.statuses.at(-1)).toMatch(/payment service unreachable.*; retry in 6 s$/);

    emu = await startEmulator({ port, seed: SEED });
    await u.until(() => u.daemon.status().inService, 15_000, "in service");
    expect(u.vmc.status).toBe("enabled");
    expect(u.enabledWithUnresolved).toEqual([0]);
    expect(u.display.last()).toMatchObject({ kind: "idle", message: "Choose a product" });
    expect(u.notifier.statuses.at(-1)).toBe("in service as vm-down");
    expect(u.notifier.readies).toHaveLength(1);
  }, 20_000);

  it("a service that accepts and never answers: out of service; when it answers, the journal's unresolved sale is settled before the VMC is enabled", async () => {
    dir = tempDir();
    emu = await startEmulator({ seed: SEED, pollDelayMs: 20 });
    const t = target(emu.info.port);
    // A sale the last run left unresolved: reserved at the service, vend approved, outcome unknown.
    const pos = emulatorDriver(emu, { ...t, merchantPosId: "vm-hang", clock: systemClock });
    const identity = await pos.open();
    const orderId = "vm-hang-00001-beef";
    const ref = await pos.start({
      orderId,
      amount: 1500,
      idempotencyKey: "5d7e2c1a-0000-4000-8000-00000000beef",
    });
    emu.userSimulation.checkin(identity.beaconId, "+4520031801");
    emu.userSimulation.accept(identity.beaconId, "+4520031801");
    expect((await pollUntil(pos, ref, (o) => o.state === "reserved")).state).toBe("reserved");
    await pos.close();
    const loaded = v10Unit(dir, "vm-hang", t);
    const j = openSqliteJournal({ path: loaded.config.journal.path, unitId: "vm-hang", clock: systemClock });
    j.openSession({ id: "s-hang", orderId, flow: "selection", item: 3, price: 1500, driver: "v10" });
    j.completeIntent(
      j.recordIntent({ sessionId: "s-hang", op: "start", orderId, paymentId: null, amount: 1500 }).id,
      "done",
      "",
    );
    j.setPaymentId("s-hang", ref.id);
    j.approveVend("s-hang", 3, 1500);
    j.close();

    emu.faults.add({ path: "/**", fault: "hang", count: 1_000_000 });
    unit = await startTestDaemon(loaded);
    const u = unit;
    await u.until(() => u.codes().includes("paymentUnreachable"), 10_000, "out of service");
    await u.advance(60_000);
    expect(u.daemon.status()).toMatchObject({ inService: false, reasons: [{ code: "paymentUnreachable" }] });
    expect(u.daemon.status().reasons[0]?.detail).toMatch(/no answer within 150 ms/);
    expect(u.vmc.status).toBe("disabled");
    expect(emu.ledger().filter((e) => e.kind === "captured")).toEqual([]);

    emu.faults.clear();
    await u.until(() => u.daemon.status().inService, 30_000, "in service");
    // Settled first (MDB §7.4.7: an approved vend with an unknown outcome is captured), then enabled.
    expect(
      emu
        .ledger()
        .filter((e) => e.kind === "captured")
        .map((e) => e.amount),
    ).toEqual([1500]);
    expect(u.enabledWithUnresolved).toEqual([0]);
    expect(u.vmc.status).toBe("enabled");
  }, 20_000);

  it("5xx from the service heals the same way; refused credentials are retried slowly, never crash", async () => {
    dir = tempDir();
    emu = await startEmulator({ seed: SEED });
    emu.faults.add({ path: "/**", fault: "500", applied: false, count: 3 });
    unit = await startTestDaemon(v10Unit(dir, "vm-5xx", target(emu.info.port)));
    const u = unit;
    await u.until(() => u.daemon.status().inService, 30_000, "in service after 5xx");
    expect(u.notifier.readies).toHaveLength(1);
    await u.daemon.stop();
    unit = undefined;

    const bad = await startTestDaemon(v10Unit(tempDir(), "vm-401", target(emu.info.port, "wrong-secret")));
    unit = bad;
    await bad.until(() => bad.codes().includes("paymentRefused"), 10_000, "refused");
    const refused = bad.daemon.status().reasons[0];
    expect(refused?.detail).toMatch(/refused this unit \(unauthorized\)/);
    expect(refused?.detail).not.toContain("wrong-secret");
    // Slow: the next attempt is minutes away (random 0.5: 3/4 of 5 minutes).
    expect((refused?.retryAt ?? 0) - bad.clock.now()).toBe(225_000);
    expect(bad.display.last()).toEqual({ kind: "outOfService", reason: "Payment service refused this unit" });
    const requests = emu.stats().requests;
    await bad.advance(60_000);
    expect(emu.stats().requests).toBe(requests);
    expect(bad.vmc.status).toBe("disabled");
  }, 20_000);

  it("VMC adapter unplugged at start-up: stays up out of service, retries with backoff, goes in service when it answers", async () => {
    dir = tempDir();
    emu = await startEmulator({ seed: SEED });
    const clock = new ManualClock(Date.now());
    const vmc = new SimVmc({ clock, dispenseMs: 300 });
    const open = vmc.open.bind(vmc);
    let refusals = 3;
    vmc.open = async () => {
      if (refusals > 0) {
        refusals--;
        throw new VmcError("io", "cannot open /dev/ttyUSB0: No such file or directory");
      }
      await open();
    };
    unit = await startTestDaemon(v10Unit(dir, "vm-unplug", target(emu.info.port)), {
      clock,
      deps: { devices: { vmc }, policy: { baseDelayMs: 1000, maxDelayMs: 8000 } },
    });
    const u = unit;
    const failed = settled(u.daemon.failed);
    await u.until(() => u.codes().includes("vmcUnavailable"), 10_000, "out of service");
    const reason = u.daemon.status().reasons[0];
    expect(reason?.detail).toMatch(/vending machine link unavailable \(io\): cannot open \/dev\/ttyUSB0/);
    // random 0.5: 3/4 of the first delay.
    expect((reason?.retryAt ?? 0) - clock.now()).toBe(750);
    expect(u.display.last()).toEqual({ kind: "outOfService", reason: "Vending machine not connected" });
    expect(u.notifier.readies).toHaveLength(1);
    expect(u.notifier.readies[0]).toMatch(/^out of service: vending machine link unavailable/);
    await u.until(() => u.daemon.status().inService, 30_000, "in service once the adapter answers");
    expect(refusals).toBe(0);
    expect(failed()).toBe(false);
    expect(vmc.status).toBe("enabled");
    expect(u.notifier.statuses.at(-1)).toBe("in service as vm-unplug");
  }, 20_000);
});
