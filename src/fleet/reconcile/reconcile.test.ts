import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  consentRefreshToken,
  EPOCH,
  emulatorEndpoints,
  insertSales,
  type SeededDay,
  seedDay,
} from "../../../scripts/reconcileDay.js";
import type { Emulator } from "../../emulator/index.js";
import { V10Kit } from "../../emulator/v10/testkit.test-support.js";
import { ReportingClient } from "../../payment/reporting/client.js";
import { openFleetDb } from "../database.js";
import type { FleetDb } from "../db/open.js";
import type { SalesTable } from "../db/schema.js";
import { problems, reconcile } from "./match.js";
import { dayStart, runReconcile } from "./run.js";

/**
 * Issue 17 acceptance: a day of 5,000 vends across 20 units (both payment interfaces, refunds, partial
 * captures) in the emulator's ledger and the matching fleet sales rows reconciles clean; the next day, one
 * missing payment, one amount mismatch, one unknown transaction and one double refund are each reported with
 * the unit and session (the order id for the unknown one) they belong to. Results are stored in recon_runs /
 * recon_lines.
 */
const DAY1 = "2026-11-24";
const DAY2 = "2026-11-25";

describe("reconciliation against the emulator", () => {
  let kit: V10Kit;
  let emu: Emulator;
  let fleet: FleetDb;
  let client: ReportingClient;
  let day1: SeededDay;
  let day2: SeededDay;

  const insert = (rows: SalesTable[]) => insertSales(fleet.db, rows);

  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0, startTime: Date.parse(`${DAY1}T00:00:00Z`) });
    emu = kit.emu;
    fleet = await openFleetDb(":memory:");
    day1 = seedDay(emu, { vends: 5000, units: 20 });
    // Two more vends through the V10 HTTP API itself (not the ledger): a partial capture, and a capture
    // refunded in part; the sales rows as the unit would report them.
    await kit.refreshToken();
    const { posId, beaconId } = await kit.createPos();
    const template = day1.rows[0] as SalesTable;
    for (const [n, reserve, capture, refund] of [
      [1, 30, 12.5, 0],
      [2, 15, 15, 5],
    ] as const) {
      const orderId = `vm0-${EPOCH}-${60_000 + n}`;
      kit.emu.userSimulation.checkin(beaconId, "+4520031801");
      const r = await kit.initiate(posId, reserve, { orderId });
      const paymentId = (r.body as { paymentId: string }).paymentId;
      kit.emu.userSimulation.accept(beaconId, "+4520031801");
      emu.clock.advance(1000);
      expect(
        (await kit.call("POST", `/v10/payments/${paymentId}/capture`, { body: { amount: capture } })).status,
      ).toBe(200);
      if (refund > 0) {
        const rf = await kit.call("POST", "/v10/refunds", {
          body: { paymentId, refundOrderId: `r-${n}`, amount: refund, currencyCode: "DKK" },
        });
        const refundId = (rf.body as { refundId: string }).refundId;
        emu.clock.advance(200);
        expect((await kit.call("POST", `/v10/refunds/${refundId}/capture`)).status).toBe(200);
      }
      day1.rows.push({
        ...template,
        seq: 60_000 + n,
        session_id: `s-http-${n}`,
        order_id: orderId,
        payment_id: paymentId,
        driver: "v10",
        price: reserve * 100,
        approved: reserve * 100,
        captured: capture * 100,
        refunded: refund * 100,
        closed_at: emu.clock.now(),
      });
    }
    emu.reporting.advanceToCutoff(); // DAY2 02:00: DAY1's transfer is made
    await insert(day1.rows);

    // DAY2: 200 vends, then the faults.
    day2 = seedDay(emu, { vends: 200, units: 20, firstSeq: 10_001, stepMs: 60_000 });
    const { v10, legacy } = emu.info;
    const v10Scope = { interface: "v10" as const, merchant: v10.merchantVat, point: v10.storeId };
    const rows = day2.rows;
    // 1. Missing payment: the journal captured, the service never reported it.
    const last = rows[rows.length - 1] as SalesTable;
    rows.push({
      ...last,
      seq: 9001,
      session_id: "s-missing",
      order_id: `vm7-${EPOCH}-20001`,
      unit_id: "vm7",
    });
    // 2. Amount mismatch: the journal says 1.00 more than the service captured.
    const mismatch = rows[40] as SalesTable;
    mismatch.captured += 100;
    // 3. Unknown transaction: a payment with a unit's order id the fleet never received.
    emu.clock.advance(1000);
    emu.recordLedger({
      ...v10Scope,
      id: "pay-x",
      paymentId: null,
      orderId: `vm3-${EPOCH}-30001`,
      kind: "captured",
      amount: 1500,
    });
    // 4. Double refund: the service refunded a vend twice; the journal once.
    const refundedOnce = rows.find((r) => r.driver === "legacy" && r.refunded > 0 && r.refunded < r.captured);
    if (refundedOnce === undefined) throw new Error("no partially refunded legacy vend in day 2");
    emu.clock.advance(1000);
    emu.recordLedger({
      interface: "legacy",
      merchant: legacy.merchantId,
      point: legacy.locationId,
      id: "ref-again",
      paymentId: refundedOnce.order_id,
      orderId: refundedOnce.order_id,
      kind: "refunded",
      amount: refundedOnce.refunded,
    });
    emu.reporting.advanceToCutoff();
    await insert(rows);

    client = new ReportingClient({
      ...emulatorEndpoints(emu),
      clientId: emu.info.reporting.clientId,
      clientSecret: emu.info.reporting.clientSecret,
      refreshToken: await consentRefreshToken(emu),
    });
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await fleet?.close();
    await kit?.close();
  });

  it("5,000 vends across 20 units (and 2 through the V10 HTTP API), both interfaces, refunds and partial captures: clean", async () => {
    const started = performance.now();
    const run = await runReconcile(fleet.db, client, { from: DAY1, to: DAY1, timeZone: "UTC", runAt: 1 });
    const r = run.result;
    expect(problems(r)).toEqual([]);
    expect(r.clean).toBe(true);
    expect(r.counts.matched).toBe(5002);
    const refunds = day1.rows.filter((x) => x.refunded > 0).length;
    expect(refunds).toBeGreaterThan(400);
    expect(r.counts.refundMatched).toBe(refunds);
    expect(new Set(day1.rows.map((x) => x.driver))).toEqual(new Set(["v10", "legacy"]));
    expect(day1.rows.some((x) => x.captured < x.price)).toBe(true);
    expect(r.transfers).toHaveLength(1);
    expect(r.transfers[0]?.difference).toBe(0);
    expect(r.transfers[0]?.received).toBeGreaterThan(0);
    expect(run.matchMs).toBeLessThan(2000);
    expect(performance.now() - started).toBeLessThan(20_000);

    const stored = await fleet.db
      .selectFrom("recon_runs")
      .selectAll()
      .where("id", "=", run.runId)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ from_day: DAY1, to_day: DAY1, clean: 1, run_at: 1 });
    const n = await fleet.db
      .selectFrom("recon_lines")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("run_id", "=", run.runId)
      .where("class", "=", "matched")
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(5002);
  }, 30_000);

  it("transfers are checked against their contents read through v1, v2 JSON and v2 CSV alike (issue 30)", async () => {
    const runs = [];
    for (const contents of [
      { version: 1 as const },
      { version: 2 as const },
      { version: 2 as const, format: "csv" as const },
    ])
      runs.push(
        await runReconcile(fleet.db, client, { from: DAY1, to: DAY1, timeZone: "UTC", runAt: 3, contents }),
      );
    for (const run of runs) {
      expect(run.result.clean).toBe(true);
      expect(run.result.transfers.length).toBeGreaterThan(0);
      for (const t of run.result.transfers) expect(t.expected).toBe(t.received);
    }
    expect(runs[1]?.result.transfers).toEqual(runs[0]?.result.transfers);
    expect(runs[2]?.result.transfers).toEqual(runs[0]?.result.transfers);
  });

  it("the injected faults are each reported with their unit and session", async () => {
    const run = await runReconcile(fleet.db, client, { from: DAY2, to: DAY2, timeZone: "UTC", runAt: 2 });
    const r = run.result;
    expect(r.clean).toBe(false);
    const bad = problems(r).filter((l) => l.class !== "transfer");
    expect(bad).toHaveLength(4);
    const by = (cls: string) => bad.find((l) => l.class === cls);
    expect(by("missingInReport")).toMatchObject({
      unit_id: "vm7",
      session_id: "s-missing",
      expected: day2.rows.at(-1)?.captured,
      reported: 0,
    });
    const mismatch = day2.rows[40] as SalesTable;
    expect(by("amountMismatch")).toMatchObject({
      unit_id: mismatch.unit_id,
      session_id: mismatch.session_id,
      expected: mismatch.captured,
      reported: mismatch.captured - 100,
    });
    expect(by("unknownInFleet")).toMatchObject({
      unit_id: "vm3",
      session_id: null,
      order_id: `vm3-${EPOCH}-30001`,
      reported: 1500,
    });
    const double = by("refundUnmatched");
    expect(double?.reason).toMatch(/double refund/);
    const twice = day2.rows.find((x) => x.order_id === double?.order_id);
    expect(double).toMatchObject({
      unit_id: twice?.unit_id,
      session_id: twice?.session_id,
      reported: 2 * (twice?.refunded ?? 0),
    });
    // The transfer equals its own contents (issue 30): each wrong line above is reported once, on its line,
    // not again as a transfer difference.
    const t = r.transfers[0];
    expect(t).toBeDefined();
    expect(t).toMatchObject({ difference: 0, currency: "DKK" });
    expect(t?.expected).toBe(t?.received);
    const stored = await fleet.db
      .selectFrom("recon_runs")
      .select("clean")
      .where("id", "=", run.runId)
      .executeTakeFirstOrThrow();
    expect(stored.clean).toBe(0);
  });

  it("matching alone: the same inputs give the same result; day starts follow the time zone", () => {
    const r = reconcile({ from: DAY1, to: DAY1, sales: [], lines: [], transfers: [], timeZone: "UTC" });
    expect(r.clean).toBe(true);
    expect(dayStart("2026-11-24", "UTC")).toBe(Date.parse("2026-11-24T00:00:00Z"));
    expect(dayStart("2026-11-24", "Europe/Oslo")).toBe(Date.parse("2026-11-23T23:00:00Z"));
    expect(dayStart("2026-07-01", "Europe/Oslo")).toBe(Date.parse("2026-06-30T22:00:00Z"));
  });
});
