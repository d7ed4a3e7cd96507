import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { V10_ENV } from "../config/fixtures.js";
import { parseConfig } from "../config/load.js";
import { ManualClock } from "../core/clock.js";
import { PaymentError } from "../payment/errors.js";
import { defaultDoctorDeps } from "./deps.js";
import { runDoctor } from "./plan.js";
import { allPassed, formatJson, formatTable } from "./run.js";
import { enoent, fakeDeps, loaded, row, silent } from "./test-support.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-doctor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("vendd doctor: the table, the unit itself and the payment service", () => {
  it("the sim board passes every check and renders a table and JSON", async () => {
    const results = await runDoctor(loaded(), fakeDeps());
    expect(results.map((r) => [r.check, r.status])).toEqual([
      ["clock", "ok"],
      ["disk", "ok"],
      ["journal", "ok"],
      ["vmc", "ok"],
      ["display", "ok"],
      ["gpio", "ok"],
      ["ble", "ok"],
      ["nfc", "ok"],
      ["payment", "ok"],
    ]);
    expect(row(results, "clock").detail).toBe("2026-11-22T12:00:00Z; NTP synchronized");
    expect(row(results, "ble").detail).toContain("probe id");
    expect(row(results, "gpio").detail).toBe(
      "sim port opened (statusLed 18, serviceButton 23, doorSwitch 24)",
    );
    expect(allPassed(results)).toBe(true);
    const table = formatTable(results).split("\n");
    expect(table[0]).toMatch(/^CHECK\s+STATUS\s+DETAIL$/);
    expect(table).toContain("all checks passed");
    expect(JSON.parse(formatJson(results))).toMatchObject({ ok: true, checks: expect.any(Array) });
  });

  it("skips what is disabled or absent", async () => {
    const deps = fakeDeps({ exists: () => false });
    const cfg = loaded({ ble: { enabled: false }, nfc: { enabled: false }, display: { kind: "none" } });
    const results = await runDoctor(cfg, deps);
    expect(row(results, "journal")).toMatchObject({
      status: "skip",
      detail: expect.stringContaining("no journal"),
    });
    expect(row(results, "ble").status).toBe("skip");
    expect(row(results, "nfc").status).toBe("skip");
    expect(row(results, "display").status).toBe("skip");
    expect(allPassed(results)).toBe(true);
  });

  it("display, clock and disk failures say what to check", async () => {
    const cfg = loaded({ display: { device: "/dev/does-not-exist" } });
    const deps = fakeDeps({
      probeWritable: () => {
        throw enoent();
      },
      statfs: async () => ({ bavail: 10, bsize: 4096 }),
      ntpSynchronized: async () => false,
    });
    const results = await runDoctor(cfg, deps);
    expect(row(results, "display").detail).toBe(
      "/dev/does-not-exist does not exist: is the screen connected? Check display.device (a Pi's screen is usually /dev/tty1)",
    );
    expect(row(results, "disk").detail).toMatch(/^only 0 MiB free at .* \(at least 50 MiB needed\)/);
    expect(row(results, "clock")).toMatchObject({
      status: "ok",
      detail: expect.stringContaining("NOT synchronized"),
    });
    const eacces = fakeDeps(
      {
        probeWritable: () => {
          throw Object.assign(new Error("EACCES"), { code: "EACCES" });
        },
      },
      Date.UTC(2020, 0, 1),
    );
    const more = await runDoctor(cfg, eacces);
    expect(row(more, "display").detail).toContain("add the vendd user to the tty group");
    expect(row(more, "clock").detail).toMatch(/^system time is 2020-.*: set the clock/);
    const gone = await runDoctor(loaded(), fakeDeps({ statfs: async () => Promise.reject(enoent()) }));
    expect(row(gone, "disk").detail).toContain("does not exist: create it (StateDirectory=vendd");
  });

  it("journal integrity runs read-only on the real file and reports corruption", async () => {
    const path = join(dir, "real.db");
    const db = new Database(path);
    db.exec("PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    const real = defaultDoctorDeps(new ManualClock(), silent);
    expect(real.integrityCheck(path)).toEqual(["ok"]);
    db.close();
    const cfg = loaded({ journal: { path } });
    const ok = await runDoctor(cfg, fakeDeps({ integrityCheck: real.integrityCheck }));
    expect(row(ok, "journal")).toMatchObject({ status: "ok", detail: `${path}: integrity ok` });
    const bad = await runDoctor(cfg, fakeDeps({ integrityCheck: () => ["row 3 missing from index i1"] }));
    expect(row(bad, "journal").detail).toContain("first: row 3 missing from index i1; stop vendd");
  });

  it("payment failures name what to check and never the secret", async () => {
    const refused = fakeDeps({
      fetchToken: async () =>
        Promise.reject(new PaymentError("unauthorized", "token: HTTP 401", { status: 401 })),
    });
    const r1 = row(await runDoctor(loaded(), refused), "payment");
    expect(r1.detail).toBe(
      "127.0.0.1:8080 refused the credentials (token: HTTP 401): check payment.v10.clientId, payment.v10.merchantVat and the client secret",
    );
    expect(r1.detail).not.toContain(V10_ENV.VENDD_V10_CLIENT_SECRET);
    const legacy = parseConfig(
      {
        unit: { id: "vm-2", name: "V" },
        journal: { path: join(dir, "j2.db") },
        payment: {
          driver: "legacy",
          legacy: {
            baseUrl: "http://127.0.0.1:9",
            merchantId: "M",
            locationId: "L",
            posId: "p",
            posUnitId: "123456789012345",
          },
        },
      },
      undefined,
      { VENDD_LEGACY_API_KEY: "k", VENDD_LEGACY_MERCHANT_KEY: "m" },
    );
    const r2 = row(await runDoctor(legacy, fakeDeps({ readPosUnit: async () => null })), "payment");
    expect(r2).toMatchObject({ status: "ok", detail: expect.stringContaining("PoS not registered yet") });
  });
});
