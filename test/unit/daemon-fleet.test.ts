/**
 * The fleet link inside a running unit (issue 16): with a `fleet` section the daemon reports its version at
 * start, its service changes, and every closed session, and delivers them to the fleet (the in-test double)
 * with heartbeats; the sale itself never waits for the fleet.
 */
import { appendFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { ManualClock } from "../../src/core/clock.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { UnitEvent } from "../../src/core/fleetWire.js";
import { SimPaymentDriver } from "../../src/payment/sim.js";
import { FakeFleet } from "../support/fakeFleet.js";
import { NOWHERE, startTestDaemon, type TestDaemon, tempDir, v10Unit } from "../support/inprocess.js";

let dir: string;
let unit: TestDaemon | undefined;
let fleet: FakeFleet | undefined;
afterEach(async () => {
  await unit?.daemon.stop();
  unit = undefined;
  await fleet?.close();
  fleet = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe("a unit with a fleet link", () => {
  it("reports its start, its service changes and a sale to the fleet, in seq order, once", async () => {
    dir = tempDir();
    const clock = new ManualClock(Date.now());
    const f = await FakeFleet.start({ now: () => clock.now() });
    fleet = f;
    v10Unit(dir, "vm-fl", NOWHERE);
    const keyFile = join(dir, "fleet.key");
    writeFileSync(keyFile, generateUnitKey().privatePem, { mode: 0o600 });
    appendFileSync(
      join(dir, "unit.yaml"),
      `\nfleet: { url: "${f.url}", keyFile: ${keyFile}, heartbeatSeconds: 30 }\n`,
    );
    const loaded = loadConfig(join(dir, "unit.yaml"), { secretsFile: join(dir, "secrets.yaml"), env: {} });
    const payment = new SimPaymentDriver({ clock, customer: () => ({ action: "accept", afterMs: 1500 }) });
    const u = await startTestDaemon(loaded, { clock, deps: { devices: { payment }, version: "9.9.9" } });
    unit = u;
    await u.until(() => u.daemon.status().inService, 10_000, "in service");
    u.vmc.requestVend(3, 250);
    await u.until(() => f.stored("vm-fl").some((e) => e.kind === "session"), 60_000, "the sale at the fleet");
    const events = f.stored("vm-fl").map((e) => UnitEvent.parse(e));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({
      kind: "version",
      data: { kind: "release", version: "9.9.9", outcome: "started" },
    });
    const service = events.flatMap((e) => (e.kind === "service" ? [e.data.state] : []));
    expect(service.at(0)).toBe("outOfService");
    expect(service.at(-1)).toBe("inService");
    const sale = events.find((e) => e.kind === "session");
    expect(sale?.kind === "session" && sale.data).toMatchObject({
      item: 3,
      price: 250,
      result: "captured",
      captured: 250,
      currency: "DKK",
      driver: "sim",
    });
    expect(f.received).toBe(events.length);
    await u.until(() => f.heartbeats.some((h) => h.state === "inService"), 60_000, "a heartbeat in service");
    expect(f.heartbeats.at(-1)).toMatchObject({ unitId: "vm-fl", versions: { vendd: "9.9.9" }, vmc: "up" });
    expect(f.refusals).toEqual([]);
  });
});
