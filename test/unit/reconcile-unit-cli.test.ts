/**
 * One unit without a fleet (issue 17): `vendd journal export` gives the journal's finished sessions as JSON
 * lines of fleetWire SessionData (read-only), and `vendd reconcile --journal FILE` matches them with the
 * emulator's report: clean when the unit's payments are all there (another unit's payments on the same
 * payment point are not its business), exit 1 with the order id when the report holds a payment of this unit
 * the journal does not know.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentRefreshToken, emulatorEndpoints } from "../../scripts/reconcileDay.js";
import { ManualClock } from "../../src/core/clock.js";
import { SessionData } from "../../src/core/fleetWire.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { vendd } from "../support/cli.js";
import { journalSale } from "../support/journalSales.js";

const SESSIONS = 30;

describe("vendd journal export and vendd reconcile (a unit without a fleet)", () => {
  let emu: Emulator;
  let dir: string;
  let journal: string;
  const env = { TZ: "UTC" };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-unit-recon-"));
    journal = join(dir, "journal.db");
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse("2026-11-24T08:00:00Z") });
    const { legacy } = emu.info;
    const scope = { interface: "legacy" as const, merchant: legacy.merchantId, point: legacy.locationId };
    const clock = new ManualClock(Date.parse("2026-11-24T09:00:00Z"));
    const j = openSqliteJournal({ path: journal, unitId: "vm5", clock, currency: "DKK" });
    try {
      for (let i = 0; i < SESSIONS; i++) {
        clock.advance(60_000);
        const id = `s${i}`;
        const price = 1000 + i * 10;
        const captured = i % 5 === 0 ? price - 200 : price;
        const orderId = journalSale(j, {
          id,
          item: i + 1,
          price,
          captured,
          driver: "legacy",
          paymentId: "order",
          startDetail: "",
          captureDetail: "",
          reason: "vend delivered",
          close: false,
        });
        emu.clock.advance(60_000);
        emu.recordLedger({
          ...scope,
          id: orderId,
          paymentId: null,
          orderId,
          kind: "captured",
          amount: captured,
        });
        if (i % 7 === 3) {
          const ref = j.recordIntent({
            sessionId: id,
            op: "refund",
            orderId,
            paymentId: orderId,
            amount: 300,
          });
          j.completeIntent(ref.id, "done", "");
          emu.recordLedger({
            ...scope,
            id: `${orderId}-r`,
            paymentId: orderId,
            orderId,
            kind: "refunded",
            amount: 300,
          });
        }
        j.closeSession(id, "captured", "vend delivered");
        // Another unit's payment on the same payment point.
        emu.recordLedger({
          ...scope,
          id: `vm6-x-${i}`,
          paymentId: null,
          orderId: `vm6-1764000000-${i + 1}`,
          kind: "captured",
          amount: 999,
        });
      }
    } finally {
      j.close();
    }
    writeFileSync(
      join(dir, "secrets.yaml"),
      `clientSecret: ${emu.info.reporting.clientSecret}\nrefreshToken: ${await consentRefreshToken(emu)}\n`,
      { mode: 0o600 },
    );
    const { baseUrl, tokenUrl } = emulatorEndpoints(emu);
    writeFileSync(
      join(dir, "reporting.yaml"),
      `baseUrl: ${baseUrl}\ntokenUrl: ${tokenUrl}\nclientId: ${emu.info.reporting.clientId}\nsecretsFile: secrets.yaml\ntimeZone: UTC\n`,
    );
  }, 30_000);
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const day = ["--from", "2026-11-24", "--to", "2026-11-24"];

  it("journal export: every finished session as SessionData JSON lines", async () => {
    const r = await vendd(["journal", "export", "--journal", journal, ...day], { env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(SESSIONS);
    const sessions = lines.map((l) => SessionData.parse(JSON.parse(l)));
    expect(sessions[0]).toMatchObject({
      sessionId: "s0",
      driver: "legacy",
      captured: 800,
      refunded: 0,
      result: "captured",
    });
    expect(sessions[3]).toMatchObject({ refunded: 300 });
    expect(sessions[1]?.vends).toEqual([{ item: 2, price: 1010, outcome: "success" }]);
    const none = await vendd(["journal", "export", "--journal", journal, "--from", "2026-11-25"], { env });
    expect(none).toMatchObject({ code: 0, stdout: "" });
  });

  it("reconcile: clean, then a payment the journal does not know exits 1 naming it", async () => {
    const args = ["reconcile", "--journal", journal, ...day, "--reporting", join(dir, "reporting.yaml")];
    const clean = await vendd(args, { env });
    expect(clean.stderr).toBe("");
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(new RegExp(`matched ${SESSIONS}`));
    emu.recordLedger({
      interface: "legacy",
      merchant: emu.info.legacy.merchantId,
      point: emu.info.legacy.locationId,
      id: "vm5-stray",
      paymentId: null,
      orderId: "vm5-1764000000-4242",
      kind: "captured",
      amount: 1234,
    });
    const bad = await vendd([...args, "--format", "json"], { env });
    expect(bad.code).toBe(1);
    const body = JSON.parse(bad.stdout) as {
      unit: string;
      lines: { class: string; order_id: string | null }[];
    };
    expect(body.unit).toBe("vm5");
    expect(body.lines.filter((l) => l.class === "unknownInFleet")).toEqual([
      expect.objectContaining({ order_id: "vm5-1764000000-4242" }),
    ]);
  });
});

describe("vendd reconcile --journal, issue 30", () => {
  let emu: Emulator;
  let dir: string;
  let journal: string;
  const env = { TZ: "UTC" };
  let orderId = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-unit-recon30-"));
    journal = join(dir, "journal.db");
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse("2026-11-24T08:00:00Z") });
    const { legacy } = emu.info;
    const scope = { interface: "legacy" as const, merchant: legacy.merchantId, point: legacy.locationId };
    const clock = new ManualClock(Date.parse("2026-11-24T09:00:00Z"));
    const j = openSqliteJournal({ path: journal, unitId: "vm8", clock, currency: "DKK" });
    try {
      orderId = journalSale(j, {
        id: "s1",
        item: 1,
        price: 1000,
        captured: 1000,
        driver: "legacy",
        paymentId: "order",
        startDetail: "",
        captureDetail: "",
        reason: "vend delivered",
        close: true,
      });
      emu.clock.advance(60 * 60_000);
      emu.recordLedger({ ...scope, id: orderId, paymentId: null, orderId, kind: "captured", amount: 1000 });
      // Two days later the customer is refunded 3.00 of it.
      clock.advance(2 * 86_400_000);
      const ref = j.recordIntent({ sessionId: "s1", op: "refund", orderId, paymentId: orderId, amount: 300 });
      j.completeIntent(ref.id, "done", "");
      emu.clock.advance(2 * 86_400_000);
      emu.recordLedger({
        ...scope,
        id: `${orderId}-r`,
        paymentId: orderId,
        orderId,
        kind: "refunded",
        amount: 300,
      });
    } finally {
      j.close();
    }
    writeFileSync(
      join(dir, "secrets.yaml"),
      `clientSecret: ${emu.info.reporting.clientSecret}\nrefreshToken: ${await consentRefreshToken(emu)}\n`,
      { mode: 0o600 },
    );
    const { baseUrl, tokenUrl } = emulatorEndpoints(emu);
    writeFileSync(
      join(dir, "reporting.yaml"),
      `baseUrl: ${baseUrl}\ntokenUrl: ${tokenUrl}\nclientId: ${emu.info.reporting.clientId}\nsecretsFile: secrets.yaml\ntimeZone: UTC\n`,
    );
  }, 30_000);
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (from: string, to: string, format = "json") =>
    vendd(
      [
        "reconcile",
        "--journal",
        journal,
        "--from",
        from,
        "--to",
        to,
        "--reporting",
        join(dir, "reporting.yaml"),
      ].concat(["--format", format]),
      { env },
    );

  it("defect 4: a day without sessions takes the unit id from the journal itself and reconciles clean", async () => {
    const r = await run("2026-11-25", "2026-11-25", "table");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/everything reconciles/);
  });

  it("defect 3: a refund two days after its sale is tied to the journal's session, not unknown", async () => {
    const r = await run("2026-11-26", "2026-11-26");
    expect(r.stderr).toBe("");
    const body = JSON.parse(r.stdout) as { unit: string; lines: Record<string, unknown>[]; clean: boolean };
    expect(body.unit).toBe("vm8");
    expect(body.lines).toEqual([
      expect.objectContaining({
        class: "refundMatched",
        session_id: "s1",
        order_id: orderId,
        reported: 300,
        currency: "DKK",
      }),
    ]);
    expect(r.code).toBe(0);
  });
});
