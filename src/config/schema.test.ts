import { describe, expect, it } from "vitest";
import {
  issuesOf,
  LEGACY_ENV,
  pathsOf,
  rawLegacy,
  rawV10,
  setPath,
  V10_ENV,
} from "./fixtures.test-support.js";
import { parseConfig, toConfigInput } from "./load.js";

/** Applies one mutation to a valid V10 config and returns the issues. */
function mutated(path: string, value: unknown) {
  const raw = rawV10();
  setPath(raw, path, value);
  return issuesOf(raw);
}

describe("config schema: defaults", () => {
  it("fills every default of a minimal V10 config", () => {
    const { config, secrets, warnings } = parseConfig(rawV10(), undefined, V10_ENV);
    expect(config.board).toBe("sim");
    expect(config.currency).toBe("DKK");
    expect(config.journal).toEqual({
      path: "/var/lib/vendd/journal.db",
      retentionDays: 90,
      sizeLimitBytes: 8388608,
    });
    expect(config.payment.v10?.timeouts).toEqual({ postMs: 2000, getMs: 500 });
    expect(config.payment.v10?.retries).toEqual({ max: 2, baseDelayMs: 100, maxDelayMs: 2000 });
    expect(config.payment.v10?.supportedBeaconTypes).toEqual(["QR"]);
    expect(config.payment.v10?.storeId).toBeNull();
    expect(config.payment.v10?.clientSystemName).toBe("vendd");
    expect(config.vmc).toMatchObject({ driver: "sim", device: null, baudRate: 115200, decimals: 2 });
    expect(config.display).toEqual({
      kind: "terminal",
      device: null,
      scheme: "servicepos",
      width: null,
      height: null,
      bitsPerPixel: null,
      stride: null,
      sysfs: null,
      i2c: { bus: 1, address: 0x3c },
    });
    expect(config.engine).toEqual({
      flow: "selection",
      sessionMax: "20.00",
      sessionMaxMinor: 2000,
      maxPrice: "500.00",
      maxPriceMinor: 50000,
      paymentTimeoutMs: 60000,
      vendTimeoutMs: 60000,
      unknownOutcome: "capture",
    });
    expect(config.logging.level).toBe("info");
    expect(config.secrets.file).toBeNull();
    expect(secrets).toEqual({ v10: { clientSecret: "test-client-secret" } });
    expect(warnings).toEqual([]);
  });

  it("parses sessionMax exactly into minor units", () => {
    const raw = rawV10();
    raw.engine = { sessionMax: "0.29" };
    expect(parseConfig(raw, undefined, V10_ENV).config.engine.sessionMaxMinor).toBe(29);
    raw.engine = { sessionMax: "150" };
    expect(parseConfig(raw, undefined, V10_ENV).config.engine.sessionMaxMinor).toBe(15000);
  });

  it("accepts a legacy config with its secrets", () => {
    const { config, secrets } = parseConfig(rawLegacy(), undefined, LEGACY_ENV);
    expect(config.payment.legacy).toMatchObject({ apiVersion: "V08", bulkRef: "", mode: "reservation" });
    expect(secrets).toEqual({ legacy: { apiKey: "test-api-key", merchantKey: "test-merchant-key" } });
  });

  it("round-trips: the printable form validates to the same config", () => {
    const { config } = parseConfig(rawV10(), undefined, V10_ENV);
    const again = parseConfig(JSON.parse(JSON.stringify(toConfigInput(config))), undefined, V10_ENV);
    expect(again.config).toEqual(config);
  });
});

describe("config schema: each error at its exact path", () => {
  it("wrong type", () => {
    expect(mutated("unit.name", 5)).toEqual([
      { path: "unit.name", message: "must be a string, got a number (quote it in YAML)" },
    ]);
    expect(pathsOf(mutated("journal", { retentionDays: "90" }))).toEqual(["journal.retentionDays"]);
  });

  it("unknown key at the top and nested", () => {
    const raw = rawV10();
    raw.colour = "red";
    setPath(raw, "payment.v10.timeouts", { postMs: 2000, pstMs: 1 });
    expect(issuesOf(raw)).toEqual([
      { path: "payment.v10.timeouts.pstMs", message: "unknown key" },
      { path: "colour", message: "unknown key" },
    ]);
  });

  it("a secret in the main config is an unknown key with a hint, and its value is not echoed", () => {
    const issues = mutated("payment.v10.clientSecret", "canary-in-main-config");
    expect(pathsOf(issues)).toEqual(["payment.v10.clientSecret"]);
    expect(issues[0]?.message).toMatch(/secrets file or the environment/);
    expect(JSON.stringify(issues)).not.toContain("canary-in-main-config");
  });

  it("missing secret", () => {
    const issues = issuesOf(rawV10(), undefined, {});
    expect(pathsOf(issues)).toEqual(["secrets.v10.clientSecret"]);
    expect(issues[0]?.message).toContain("VENDD_V10_CLIENT_SECRET");
  });

  it("bad VAT", () => {
    for (const vat of ["DK1234567", "SE12345678", "DK-12345678", "dk12345678"]) {
      expect(pathsOf(mutated("payment.v10.merchantVat", vat))).toEqual(["payment.v10.merchantVat"]);
    }
    expect(() => parseConfig(withV10("merchantVat", "FI12345678"), undefined, V10_ENV)).not.toThrow();
  });

  it("bad beaconId; a GUID or 15 digits pass", () => {
    for (const id of ["12345", "1234567890123456", "not-a-guid", "cd851cd7-8398-4a03-83c1-391a2f5cb71"]) {
      expect(pathsOf(mutated("payment.v10.beaconId", id))).toEqual(["payment.v10.beaconId"]);
    }
    for (const id of ["123456789012345", "cd851cd7-8398-4a03-83c1-391a2f5cb71c"]) {
      expect(parseConfig(withV10("beaconId", id), undefined, V10_ENV).config.payment.v10?.beaconId).toBe(id);
    }
  });

  it("sessionMax with 3 decimals, zero, or as a number", () => {
    expect(mutated("engine", { sessionMax: "1.234" })).toEqual([
      { path: "engine.sessionMax", message: "must have at most 2 decimals" },
    ]);
    expect(pathsOf(mutated("engine", { sessionMax: "0.00" }))).toEqual(["engine.sessionMax"]);
    expect(pathsOf(mutated("engine", { sessionMax: "1e3" }))).toEqual(["engine.sessionMax"]);
    expect(mutated("engine", { sessionMax: 20 })[0]?.message).toMatch(/quote it/);
  });

  it("maxPrice: a positive amount the service and the MDB price field can carry", () => {
    const withEngine = (engine: Record<string, unknown>, vmc?: Record<string, unknown>) => {
      const raw = rawV10();
      raw.engine = engine;
      if (vmc) raw.vmc = vmc;
      return raw;
    };
    expect(
      parseConfig(withEngine({ maxPrice: "12.5" }), undefined, V10_ENV).config.engine.maxPriceMinor,
    ).toBe(1250);
    // Y = 2: 65534 on the wire is 655.34, the largest standard MDB price (vending-mdb §1.6).
    expect(
      parseConfig(withEngine({ maxPrice: "655.34" }), undefined, V10_ENV).config.engine.maxPriceMinor,
    ).toBe(65534);
    expect(issuesOf(withEngine({ maxPrice: "655.35" }), undefined, V10_ENV)).toEqual([
      {
        path: "engine.maxPrice",
        message:
          "must be at most 655.34, the largest price the MDB price field carries with vmc.decimals 2 " +
          "(vending-mdb §1.6; the default is 500.00)",
      },
    ]);
    // Y = 0 carries larger prices, Y = 3 smaller ones; the default then has to be lowered.
    const y0 = withEngine(
      { maxPrice: "65534" },
      { driver: "mdb-adapter", device: "/dev/ttyAMA0", decimals: 0 },
    );
    expect(parseConfig(y0, undefined, V10_ENV).config.engine.maxPriceMinor).toBe(6_553_400);
    const y3 = withEngine({}, { decimals: 3 });
    expect(issuesOf(y3, undefined, V10_ENV)[0]?.message).toMatch(/^must be at most 65\.53, /);
    // The payment service: V10 amounts are exact JSON numbers only below 10^13 minor units.
    const pulse = { driver: "pulse" };
    const huge = withEngine({ maxPrice: "100000000000.00" }, pulse);
    expect(issuesOf(huge, undefined, V10_ENV)).toContainEqual({
      path: "engine.maxPrice",
      message: "must be at most 99999999999.99",
    });
    for (const bad of ["0", "0.00", "-1", "1.001", "1e3", "99999999999999"]) {
      expect(pathsOf(mutated("engine", { maxPrice: bad }))).toEqual(["engine.maxPrice"]);
    }
    expect(mutated("engine", { maxPrice: 20 })[0]?.message).toMatch(/quote it/);
  });

  it("paths and ids with control characters are refused", () => {
    expect(mutated("journal", { path: "/var/lib/vendd/\x1b[2Jjournal.db" })).toEqual([
      { path: "journal.path", message: "must not contain control characters" },
    ]);
    expect(pathsOf(mutated("payment.v10.clientId", "id\r\nX-Injected: 1"))).toEqual(["payment.v10.clientId"]);
  });

  it("maxPrice bounds the pulse machine's one price", () => {
    const raw = rawV10();
    raw.vmc = { driver: "pulse" };
    raw.pulse = { price: "20.00", pins: { output: 17 } };
    raw.engine = { maxPrice: "10.00" };
    expect(issuesOf(raw, undefined, V10_ENV)).toEqual([
      { path: "pulse.price", message: "must be at most engine.maxPrice (a vend above it is denied)" },
    ]);
    raw.engine = { maxPrice: "20.00" };
    expect(parseConfig(raw, undefined, V10_ENV).config.pulse.price).toBe("20.00");
  });

  it("legacy posUnitId not 15 digits", () => {
    const raw = rawLegacy();
    setPath(raw, "payment.legacy.posUnitId", "12345678901234");
    expect(issuesOf(raw, undefined, LEGACY_ENV)).toEqual([
      { path: "payment.legacy.posUnitId", message: "must be exactly 15 digits" },
    ]);
  });

  it("driver v10 without a v10 section", () => {
    expect(mutated("payment.v10", undefined)).toEqual([
      { path: "payment.v10", message: "required when payment.driver is v10" },
    ]);
    const raw = rawV10();
    raw.payment = { v10: undefined };
    expect(pathsOf(issuesOf(raw))).toEqual(["payment.v10"]);
  });

  it("driver legacy without a legacy section, and without its secrets", () => {
    expect(pathsOf(mutated("payment.driver", "legacy"))).toEqual([
      "payment.legacy",
      "secrets.legacy.apiKey",
      "secrets.legacy.merchantKey",
    ]);
  });

  it("cross-field rules: store lookup keys, serial device, retry delays", () => {
    expect(pathsOf(mutated("payment.v10.merchantBrandId", undefined))).toEqual([
      "payment.v10.merchantBrandId",
    ]);
    expect(() =>
      parseConfig(withV10("storeId", "cd851cd7-8398-4a03-83c1-391a2f5cb71c", true), undefined, V10_ENV),
    ).not.toThrow();
    expect(pathsOf(mutated("vmc", { driver: "mdb-adapter" }))).toEqual(["vmc.device"]);
    expect(pathsOf(mutated("payment.v10.retries", { baseDelayMs: 500, maxDelayMs: 100 }))).toEqual([
      "payment.v10.retries.maxDelayMs",
    ]);
    expect(pathsOf(mutated("payment.v10.retries", { max: 6 }))).toEqual(["payment.v10.retries.max"]);
  });

  it("field rules: unit id and name, beacon types, enums, bounds", () => {
    expect(pathsOf(mutated("unit.id", "vm_0001"))).toEqual(["unit.id"]);
    expect(pathsOf(mutated("unit.id", "vm-0001-0001-1"))).toEqual(["unit.id"]);
    expect(pathsOf(mutated("unit.name", "x".repeat(37)))).toEqual(["unit.name"]);
    expect(pathsOf(mutated("unit.name", "Vending ☕"))).toEqual(["unit.name"]);
    expect(pathsOf(mutated("payment.v10.supportedBeaconTypes", ["QR", "QR"]))).toEqual([
      "payment.v10.supportedBeaconTypes",
    ]);
    expect(pathsOf(mutated("payment.v10.supportedBeaconTypes", ["QR", "Wifi"]))).toEqual([
      "payment.v10.supportedBeaconTypes[1]",
    ]);
    expect(mutated("board", "pi-zero")[0]?.message).toBe(
      "must be one of: sim, pi-hat, pi-usb, pi-pulse, sim-pulse, pi-spi-panel, pi-oled",
    );
    expect(pathsOf(mutated("journal", { retentionDays: 6 }))).toEqual(["journal.retentionDays"]);
    expect(pathsOf(mutated("engine", { paymentTimeoutMs: 999 }))).toEqual(["engine.paymentTimeoutMs"]);
    expect(pathsOf(mutated("display", { scheme: "ServicePos" }))).toEqual(["display.scheme"]);
    expect(pathsOf(mutated("payment.v10.baseUrl", "ftp://127.0.0.1"))).toEqual(["payment.v10.baseUrl"]);
    expect(mutated("payment.v10.tokenUrl", undefined)).toEqual([
      { path: "payment.v10.tokenUrl", message: "required" },
    ]);
  });

  it("refuses an empty file instead of falling back to defaults", () => {
    expect(issuesOf(null)).toEqual([{ path: "(root)", message: "must be a mapping, got null" }]);
    expect(pathsOf(issuesOf({}))).toEqual(["unit", "payment"]);
  });
});

/** A valid V10 raw config with one v10 field set (and optionally brand/location removed). */
function withV10(key: string, value: unknown, dropLookup = false) {
  const raw = rawV10();
  setPath(raw, `payment.v10.${key}`, value);
  if (dropLookup) {
    setPath(raw, "payment.v10.merchantBrandId", undefined);
    setPath(raw, "payment.v10.merchantLocationId", undefined);
  }
  return raw;
}
