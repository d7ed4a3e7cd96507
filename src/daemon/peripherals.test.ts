import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { createSimBeacon } from "../../drivers/ble/sim.js";
import { createSimGpio } from "../../drivers/gpio/sim.js";
import { hashBadgeUid } from "../../drivers/nfc/badges.js";
import { createSimNfcStation, SimTag } from "../../drivers/nfc/sim.js";
import { buildConfig } from "../config/load.js";
import { flushMicrotasks, ManualClock } from "../core/clock.js";
import { startPeripherals } from "./peripherals.js";

const BEACON = "100000000000042";

async function setup(members?: { tap(normalisedUid: string): unknown }) {
  const clock = new ManualClock();
  const hash = await hashBadgeUid("04A1B2C3D4E5F6", 1024);
  const config = buildConfig({
    unit: { id: "vm-p", name: "Peripherals" },
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
    ble: { enabled: true, kind: "sim" },
    nfc: { enabled: true, kind: "sim", badges: [{ name: "Tech Ann", hash }] },
    gpio: { kind: "sim", pins: { statusLed: 17, serviceButton: 27, doorSwitch: 22 } },
  });
  const gpio = createSimGpio({ clock, inputs: { "22": false } });
  await gpio.open();
  const beacon = createSimBeacon({ clock });
  const nfc = createSimNfcStation({ clock, badges: config.nfc.badges });
  const calls: (string | null)[] = [];
  const engine = {
    pos: { beaconId: BEACON },
    async setOutOfService(reason: string | null) {
      calls.push(reason);
    },
  };
  const p = await startPeripherals(config, {
    clock,
    logger: pino({ level: "silent" }),
    engine,
    gpio,
    devices: { beacon, nfc },
    ...(members === undefined ? {} : { members }),
  });
  const settle = async () => {
    await clock.advanceAsync(200, 10);
    await flushMicrotasks();
  };
  return { clock, gpio, beacon, nfc, calls, p, settle };
}

describe("daemon peripherals", () => {
  it("advertises the beacon while in service and lights the LED", async () => {
    const t = await setup();
    await t.settle();
    expect(t.beacon.state()).toBe("advertising");
    expect(t.beacon.radio.onAir).not.toBeNull();
    expect(t.gpio.output(17)).toBe(true);
    await t.p.close();
  });

  it("toggles service mode with the service button: beacon off, LED fault, unit out of service, and back", async () => {
    const t = await setup();
    t.gpio.setInput(27, false);
    await t.settle();
    t.gpio.setInput(27, true);
    await t.settle();
    expect(t.calls).toEqual(["Service mode"]);
    expect(t.beacon.state()).toBe("stopped");
    t.gpio.setInput(27, false);
    await t.settle();
    expect(t.calls).toEqual(["Service mode", null]);
    expect(t.beacon.state()).toBe("advertising");
    await t.p.close();
  });

  it("takes the unit out of service while the door is open", async () => {
    const t = await setup();
    t.gpio.setInput(22, true);
    await t.settle();
    expect(t.p.reason).toBe("Door open");
    t.gpio.setInput(22, false);
    await t.settle();
    expect(t.calls).toEqual(["Door open", null]);
    await t.p.close();
  });

  it("toggles service mode with an authorised technician badge, and ignores an unknown one", async () => {
    const t = await setup();
    const reader = t.nfc.sim.plug();
    reader.present(new SimTag("0400000000000A"));
    await t.settle();
    reader.remove();
    expect(t.calls).toEqual([]);
    reader.present(new SimTag("04A1B2C3D4E5F6"));
    // Matching a badge runs scrypt on the thread pool: wait for its answer.
    await vi.waitFor(() => expect(t.calls).toEqual(["Service mode"]));
    await t.p.close();
  });

  it("lends a member badge's UID to the member gate only; a technician badge still toggles service mode", async () => {
    const taps: string[] = [];
    const t = await setup({ tap: (uid) => taps.push(uid) });
    const reader = t.nfc.sim.plug();
    reader.present(new SimTag("0400000000000A"));
    await vi.waitFor(() => expect(taps).toEqual(["0400000000000a"]));
    reader.remove();
    reader.present(new SimTag("04A1B2C3D4E5F6"));
    await vi.waitFor(() => expect(t.calls).toEqual(["Service mode"]));
    expect(taps).toHaveLength(1);
    await t.p.close();
  });

  it("keeps the unit in service when the BLE adapter powers off (degraded, not a crash)", async () => {
    const t = await setup();
    await t.settle();
    t.beacon.radio.setState("poweredOff");
    await t.settle();
    expect(t.beacon.state()).toBe("degraded");
    expect(t.calls).toEqual([]);
    await t.p.close();
  });
});
