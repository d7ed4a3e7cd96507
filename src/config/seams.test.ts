import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createBeacon } from "../../drivers/ble/factory.js";
import { createDisplay } from "../../drivers/display/factory.js";
import { createGpio } from "../../drivers/gpio/factory.js";
import { createNfc } from "../../drivers/nfc/factory.js";
import { createVendController } from "../../drivers/vmc/factory.js";
import { ManualClock } from "../core/clock.js";
import { SeamConfigError } from "../core/seams.js";
import { createPaymentDriver } from "../payment/factory.js";
import { LEGACY_ENV, rawLegacy, rawV10, V10_ENV } from "./fixtures.test-support.js";
import { parseConfig } from "./load.js";
import { paymentOptions, seamOptions, vmcOptions } from "./seams.js";

const load = (raw: Record<string, unknown>, env: NodeJS.ProcessEnv = V10_ENV) =>
  parseConfig(raw, undefined, env);

describe("seamOptions: the one mapping from config to every seam", () => {
  it("maps the sim board and a V10 unit onto each seam's kind and settings", () => {
    const { config, secrets } = load({ ...rawV10(), journal: { path: "/tmp/j.db" } });
    const seams = seamOptions(config, secrets);
    expect(seams.payment).toMatchObject({
      kind: "v10",
      clientId: "vendd-test",
      clientSecret: "test-client-secret",
      merchantPosId: "vm-0001",
      posName: "Vending 1",
      requirePaymentBeforeCheckin: true,
      timeouts: { postMs: 2000, getMs: 500 },
    });
    expect(seams.vmc).toEqual({ kind: "sim" });
    expect(seams.display).toEqual({ kind: "terminal", devicePath: null });
    expect(seams.gpio).toEqual({ kind: "sim" });
    expect(seams.ble).toMatchObject({ kind: "sim", companyId: 0xffff });
    expect(seams.nfc).toEqual({ kind: "sim", badges: [] });
    expect(seams.engine).toMatchObject({ flow: "selection", sessionMax: 2000, paymentMode: "reservation" });
    // Issue 30: the journal stores each session's currency (the unit's configured one).
    expect(seams.journal).toEqual({
      path: "/tmp/j.db",
      unitId: "vm-0001",
      sizeLimitBytes: 8_388_608,
      currency: "DKK",
    });
  });

  it("maps a Pi board's devices", () => {
    const { config, secrets } = load({ ...rawV10(), board: "pi-hat" });
    const seams = seamOptions(config, secrets);
    expect(seams.vmc).toMatchObject({ kind: "mdb-adapter", path: "/dev/serial0", currencyCode: "DKK" });
    expect(seams.display).toEqual({ kind: "terminal", devicePath: "/dev/tty1" });
    expect(seams.gpio).toEqual({ kind: "johnny-five", io: { kind: "pi-io" } });
    expect(seams.ble.kind).toBe("bleno");
    expect(seams.nfc.kind).toBe("pcsc");
  });

  it("carries the adapter's read pacing: 50 ms by default, vmc.readPacingMs when set (0 = none)", () => {
    const paced = load({ ...rawV10(), board: "pi-hat" });
    expect(seamOptions(paced.config, paced.secrets).vmc).toMatchObject({ readPacingMs: 50 });
    const vmc = { driver: "mdb-adapter", device: "/dev/ttyUSB0", readPacingMs: 0 };
    const unpaced = load({ ...rawV10(), board: "pi-hat", vmc });
    expect(seamOptions(unpaced.config, unpaced.secrets).vmc).toMatchObject({ readPacingMs: 0 });
  });

  it("maps the pulse section to minor units and carries the GPIO port's options", () => {
    const { config } = load({ ...rawV10(), board: "sim-pulse" });
    expect(vmcOptions(config)).toMatchObject({
      kind: "pulse",
      port: { kind: "sim" },
      pulsePin: 17,
      price: 500,
      valuePerPulse: 100,
      startPin: 22,
      timing: { widthMs: 50, gapMs: 50, activeHigh: true },
    });
  });

  it("maps the older interface, its keys and what it decides for the engine", () => {
    const raw = rawLegacy();
    Object.assign(raw.payment.legacy as object, { mode: "payment", captureType: "partial" });
    const { config, secrets } = load(raw, LEGACY_ENV);
    const seams = seamOptions(config, secrets);
    expect(seams.payment).toMatchObject({ kind: "legacy", apiKey: "test-api-key", posName: "Vending 2" });
    expect(seams.engine).toMatchObject({
      checkinMode: "idlePayment",
      paymentMode: "payment",
      captureType: "partial",
    });
  });

  it("refuses incomplete options with the one seam error, naming the key and never a value", () => {
    const { config, secrets } = parseConfig(rawV10(), undefined, {}, { requireSecrets: false });
    const err = (() => {
      try {
        return paymentOptions(config, secrets);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SeamConfigError);
    expect(err).toMatchObject({ seam: "payment", validKinds: ["v10", "legacy"] });
    expect(String(err)).toContain("secrets.v10.clientSecret");
    const pulse = load({ ...rawV10(), board: "sim-pulse" }).config;
    const unpriced = { ...pulse, pulse: { ...pulse.pulse, price: null } };
    expect(() => vmcOptions(unpriced)).toThrow(SeamConfigError);
    expect(() => vmcOptions(unpriced)).toThrow("vmc kind pulse needs pulse.price and pulse.pins.output");
  });
});

describe("every seam factory: create<Seam>(options, deps), one error for an unknown kind", () => {
  const clock = new ManualClock(0);
  const logger = pino({ level: "silent" });
  const factories: [string, () => Promise<unknown>][] = [
    [
      "payment",
      () => createPaymentDriver({ kind: "v9" } as never, { clock, logger, ownsOrder: () => false }),
    ],
    ["vmc", () => createVendController({ kind: "mdb" } as never, { clock, logger })],
    ["display", () => createDisplay({ kind: "lcd" } as never, {})],
    ["gpio", () => createGpio({ kind: "wiringpi" } as never, { clock })],
    ["ble", () => createBeacon({ kind: "hcitool" } as never, { clock })],
    ["nfc", () => createNfc({ kind: "usb", badges: [] } as never, { clock })],
  ];
  it.each(factories)("%s", async (seam, create) => {
    const err = await create().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeamConfigError);
    expect(err).toMatchObject({ seam, code: "seamConfig" });
    expect((err as SeamConfigError).validKinds.length).toBeGreaterThan(1);
    expect((err as Error).message).toMatch(new RegExp(`^unknown ${seam} kind ".+"; valid: `));
  });
});
