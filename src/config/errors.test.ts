import { describe, expect, it } from "vitest";
import { pathsOf, rawV10, setPath } from "./fixtures.test-support.js";
import { buildConfig, ConfigError, parseConfig } from "./load.js";

describe("config schema: all errors in one run", () => {
  it("lists every problem of an invalid file at once, in the error message too", () => {
    const raw = rawV10();
    setPath(raw, "unit.id", "this id is far too long");
    setPath(raw, "payment.v10.merchantVat", "DK1");
    setPath(raw, "payment.v10.beaconId", "42");
    setPath(raw, "payment.v10.extra", true);
    raw.engine = { sessionMax: "1.001", vendTimeoutMs: "60000" };
    raw.vmc = { driver: "mdb-adapter" };
    let error: unknown;
    try {
      parseConfig(raw, undefined, {});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    if (!(error instanceof ConfigError)) return;
    expect(error.code).toBe("config_invalid");
    const paths = pathsOf(error.issues);
    expect(paths).toEqual([
      "unit.id",
      "payment.v10.merchantVat",
      "payment.v10.beaconId",
      "payment.v10.extra",
      "vmc.device",
      "engine.sessionMax",
      "engine.vendTimeoutMs",
      "secrets.v10.clientSecret",
    ]);
    for (const p of paths) expect(error.message).toContain(`\n  ${p}: `);
  });
});

describe("buildConfig", () => {
  it("builds a full config from the required keys", () => {
    const config = buildConfig({
      unit: { id: "demo-1", name: "Demo" },
      payment: {
        v10: {
          baseUrl: "http://127.0.0.1:8080",
          tokenUrl: "http://127.0.0.1:8080/token",
          clientId: "demo",
          merchantVat: "DK12345678",
          storeId: "cd851cd7-8398-4a03-83c1-391a2f5cb71c",
        },
      },
    });
    expect(config.engine.sessionMaxMinor).toBe(2000);
    expect(config.payment.driver).toBe("v10");
  });

  it("runs the same checks", () => {
    expect(() =>
      buildConfig({ unit: { id: "demo-1", name: "Demo" }, payment: { driver: "legacy" } }),
    ).toThrow(/payment\.legacy: required when payment\.driver is legacy/);
  });
});
