import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { V10_ENV } from "../config/fixtures.test-support.js";
import { parseConfig } from "../config/load.js";
import { ManualClock } from "../core/clock.js";
import { openSqliteJournal } from "../journal/sqlite.js";
import { PaymentError } from "../payment/errors.js";
import { runDoctor } from "./checks.js";
import { defaultDoctorDeps } from "./deps.js";
import { enoent, fakeDeps, loaded, row, silent } from "./doctor.test-support.js";
import { nativeCheck } from "./native.js";
import { allPassed, formatJson, formatTable } from "./run.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-doctor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("vendd doctor: the table, the unit itself and the payment service", () => {
  it("the sim board passes every check and renders a table and JSON", async () => {
    const results = await runDoctor(loaded(), fakeDeps());
    expect(results.map((r) => [r.check, r.status])).toEqual([
      ["clock", "ok"],
      ["disk", "ok"],
      ["native modules", "ok"],
      ["journal", "ok"],
      ["vmc", "ok"],
      ["dex", "skip"],
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
    const deps = fakeDeps({ exists: () => false, journalHealth: () => ({ kind: "fresh" }) });
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

  it("disk fails, naming the problem, when the journal's directory is a regular file", async () => {
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "x");
    const real = defaultDoctorDeps(new ManualClock(), silent);
    for (const path of [join(file, "journal.db"), join(file, "sub", "journal.db")]) {
      const results = await runDoctor(loaded({ journal: { path } }), fakeDeps({ statfs: real.statfs }));
      expect(row(results, "disk")).toMatchObject({
        status: "fail",
        detail: `journal directory ${dirname(path)} is not a directory (it, or a directory above it, is a file): fix journal.path`,
      });
    }
    const ok = await runDoctor(
      loaded({ journal: { path: join(dir, "j.db") } }),
      fakeDeps({ statfs: real.statfs }),
    );
    expect(row(ok, "disk").status).toBe("ok");
  });

  it("journal: read-only on the real file; sessions that need a person; a problem with path, cause, next step", async () => {
    const path = join(dir, "real.db");
    const real = defaultDoctorDeps(new ManualClock(), silent);
    const cfg = loaded({ journal: { path } });
    const check = async () =>
      row(await runDoctor(cfg, fakeDeps({ journalHealth: real.journalHealth })), "journal");
    expect(await check()).toMatchObject({
      status: "skip",
      detail: `no journal at ${path} yet (vendd creates it)`,
    });
    const j = openSqliteJournal({ path, unitId: "vm-d", clock: new ManualClock() });
    const session = (id: string) =>
      j.openSession({ id, orderId: j.nextOrderId(), flow: "selection", item: 1, price: 100, driver: "sim" });
    session("open");
    session("flagged");
    j.flag("flagged", "vend outcome unknown");
    j.closeSession("flagged", "captured", "policy");
    // The daemon holds the journal meanwhile: doctor reads beside it.
    expect(await check()).toMatchObject({
      status: "ok",
      detail: `${path}: integrity ok; 1 unresolved (settled by recovery); 1 flagged for review (vendd journal flagged)`,
    });
    session("conflict");
    j.flag("conflict", "decided cancel, but the service shows the payment captured");
    j.closeSession(
      "conflict",
      "unsettled",
      "conflict: decided cancel, but the service shows the payment captured",
    );
    expect(await check()).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("1 session(s) conflict with what the payment service did"),
    });
    j.close();
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096);
    closeSync(fd);
    const bad = await check();
    expect(bad.status).toBe("fail");
    expect(bad.detail).toMatch(new RegExp(`^${path}: corrupt \\(.*\\)\\. Next step: Stop vendd`));
    expect(bad.detail).toContain('"Recovering a unit"');
    expect(bad.detail).not.toContain("run doctor as");
    writeFileSync(join(dir, "plain"), "x");
    const under = loaded({ journal: { path: join(dir, "plain", "journal.db") } });
    const r = row(await runDoctor(under, fakeDeps({ journalHealth: real.journalHealth })), "journal");
    expect(r).toMatchObject({ status: "fail", detail: expect.stringContaining("not a directory") });
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

describe("vendd doctor: native modules", () => {
  it("names a module built for another CPU and the next step, not the storage", async () => {
    const addon = join(dir, "better_sqlite3.node");
    const head = Buffer.alloc(64);
    head.writeUInt32BE(0x7f454c46, 0);
    head[4] = 2;
    head[5] = 1;
    head.writeUInt16LE(process.arch === "arm64" ? 62 : 183, 18);
    writeFileSync(addon, head);
    const check = nativeCheck((name) => {
      if (name === "better-sqlite3")
        throw Object.assign(
          new Error(`${addon}: cannot open shared object file: No such file or directory`),
          {
            code: "ERR_DLOPEN_FAILED",
          },
        );
    });
    const outcome = await check.run(new AbortController().signal);
    expect(outcome.status).toBe("fail");
    expect(outcome.detail).toMatch(
      /^better_sqlite3\.node is built for (x86-64|arm64 \(aarch64\)); install the release for this board$/,
    );
  });

  it("an optional module that is not installed is no failure", async () => {
    const check = nativeCheck((name) => {
      if (name === "unix-dgram")
        throw Object.assign(new Error("Cannot find module"), { code: "MODULE_NOT_FOUND" });
    });
    expect((await check.run(new AbortController().signal)).status).toBe("ok");
  });
});
