import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoadedConfig, parseConfig } from "../config/load.js";
import { systemClock } from "../core/clock.js";
import { emulatorLegacySettings, emulatorV10Settings } from "../demo/emulatorSettings.js";
import { type Emulator, startEmulator } from "../emulator/index.js";
import { defaultDoctorDeps } from "./deps.js";
import { paymentCheck } from "./payment.js";
import { runChecks } from "./run.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await emu.close();
});

const deps = () => defaultDoctorDeps(systemClock, pino({ level: "silent" }));

function v10(secret: string): LoadedConfig {
  return parseConfig(
    {
      unit: { id: "vm-1", name: "Doctor" },
      journal: { path: join("/tmp", "unused.db") },
      payment: {
        driver: "v10",
        v10: emulatorV10Settings(emu.info),
      },
    },
    { v10: { clientSecret: secret } },
    {},
  );
}

function legacy(apiKey: string, posId: string): LoadedConfig {
  return parseConfig(
    {
      unit: { id: "vm-2", name: "Doctor" },
      payment: {
        driver: "legacy",
        legacy: {
          ...emulatorLegacySettings(emu.info),
          posId,
          posUnitId: "123456789012345",
        },
      },
    },
    { legacy: { apiKey, merchantKey: emu.info.legacy.merchantKey } },
    {},
  );
}

async function check(loaded: LoadedConfig) {
  const [result] = await runChecks([paymentCheck(loaded.config, loaded.secrets, deps())], systemClock);
  if (result === undefined) throw new Error("no result");
  return result;
}

describe("payment check against the emulator (loopback HTTP, the drivers' transports)", () => {
  it("V10: the token endpoint issues a token for the client credentials", async () => {
    const before = emu.ledger().length;
    const r = await check(v10(emu.info.v10.clientSecret));
    expect(r).toMatchObject({ status: "ok", detail: expect.stringContaining("issued a token") });
    expect(emu.ledger()).toHaveLength(before);
  });

  it("V10: a wrong secret fails naming what to check, never the secret", async () => {
    const r = await check(v10("wrong-secret-canary"));
    expect(r.status).toBe("fail");
    expect(r.detail).toContain("refused the credentials");
    expect(r.detail).toContain("the client secret");
    expect(r.detail).not.toContain("wrong-secret-canary");
  });

  it("legacy: one signed read-only request; an unregistered PoS is fine, a bad key is not", async () => {
    const ok = await check(legacy(emu.info.legacy.apiKey, "doctor-pos"));
    expect(ok).toMatchObject({ status: "ok", detail: expect.stringContaining("PoS not registered yet") });
    const bad = await check(legacy("bad-key-canary", "doctor-pos"));
    expect(bad.status).toBe("fail");
    expect(bad.detail).toContain("check secrets.legacy.apiKey and the clock");
    expect(bad.detail).not.toContain("bad-key-canary");
  });

  it("an unreachable service fails with the network hint", async () => {
    const loaded = v10("x");
    const down = {
      ...loaded,
      config: {
        ...loaded.config,
        payment: {
          ...loaded.config.payment,
          v10: {
            ...(loaded.config.payment.v10 ?? expect.unreachable()),
            tokenUrl: "http://127.0.0.1:1/connect/token",
          },
        },
      },
    };
    const r = await check(down);
    expect(r).toMatchObject({ status: "fail", detail: expect.stringContaining("check the network, DNS") });
  });

  it("a service that accepts and never answers, or answers 5xx, fails saying so (as the daemon's STATUS does)", async () => {
    const secret = emu.info.v10.clientSecret;
    emu.faults.add({ path: "/**", fault: "hang", count: 1 });
    const hung = await check(v10(secret));
    expect(hung).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("no answer from 127.0.0.1"),
    });
    expect(hung.detail).toMatch(/timed out/);
    emu.faults.add({ path: "/**", fault: "500", applied: false, count: 1 });
    const failing = await check(v10(secret));
    expect(failing).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("answers with a server error"),
    });
    expect(failing.detail).toContain("HTTP 500");
    emu.faults.clear();
    expect((await check(v10(secret))).status).toBe("ok");
  });
});
