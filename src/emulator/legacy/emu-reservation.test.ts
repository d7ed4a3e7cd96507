import { beforeEach, describe, expect, it } from "vitest";
import type { SimUser } from "../types.js";
import { defaultUsers } from "../users.js";
import { createStandaloneLegacy, type StandaloneLegacy } from "./harness.test-support.js";

const UNIT = "123456789012345";
const POS = "vend-unit-7";
const IDS = { MerchantId: "POSDK99999", LocationId: "88888", PoSId: POS };
const DAY = 24 * 3600_000;
const user = (suffix: string): SimUser => {
  const u = defaultUsers().find((x) => x.phone === `+45200318${suffix}`);
  if (!u) throw new Error(`no user ${suffix}`);
  return u;
};

let w: StandaloneLegacy;
const call = (op: string, body: unknown) => w.client.call(op, body);
const start = (OrderId: string, Amount: string, CaptureType = "Full") =>
  call("ReservationStart", { ...IDS, OrderId, Amount, BulkRef: "", CaptureType });
const status = async (OrderId: string) =>
  ((await call("GetReservationStatus", { ...IDS, OrderId })).body as Record<string, unknown>)
    .ReservationStatus;
const capture = (OrderId: string, Amount: string) =>
  call("ReservationCapture", { ...IDS, OrderId, Amount, BulkRef: "" });
const cancel = (OrderId: string) => call("ReservationCancel", { ...IDS, OrderId });
async function reserve(orderId: string, amount: string, captureType = "Full"): Promise<void> {
  expect((await start(orderId, amount, captureType)).status).toBe(200);
  w.legacy.checkin(UNIT, user("01"));
  expect(w.legacy.accept(UNIT, user("01")).status).toBe(200);
  expect(await status(orderId)).toBe(100);
}

beforeEach(async () => {
  w = createStandaloneLegacy();
  await call("RegisterPoS", { ...IDS, Name: "Machine 7" });
  await call("AssignPoSUnitIdToPos", { ...IDS, PoSUnitId: UNIT });
});

describe("reservation flow (pos-legacy §6, §7)", () => {
  it("30 → 20 → 100 records `reserved`; Full capture with 0.00 records the reserved amount", async () => {
    expect(await start("S1", "25.00")).toEqual({ status: 200, body: { CustomerToken: null } });
    expect(await status("S1")).toBe(30);
    w.legacy.checkin(UNIT, user("01"));
    expect(await status("S1")).toBe(20);
    w.legacy.accept(UNIT, user("01"));
    const body = (await call("GetReservationStatus", { ...IDS, OrderId: "S1" })).body;
    expect(body).toMatchObject({
      PoSId: POS,
      ReservationStatus: 100,
      OrderId: "S1",
      Amount: 25,
      PaymentSignature: null,
    });
    expect((await capture("S1", "25.00")).body).toMatchObject({ StatusCode: 10 });
    expect(await capture("S1", "0.00")).toEqual({ status: 200, body: {} });
    expect(await capture("S1", "0.00")).toEqual({ status: 200, body: {} });
    expect(await status("S1")).toBe(100);
    expect(w.ledger.entries().map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 2500],
      ["captured", 2500],
    ]);
  });

  it("Partial capture: 0.00 and above the amount → 10; a lower amount → captured; a different repeat → 50", async () => {
    await reserve("P1", "30.00", "Partial");
    expect((await capture("P1", "0.00")).body).toMatchObject({ StatusCode: 10 });
    expect((await capture("P1", "30.01")).body).toMatchObject({ StatusCode: 10 });
    expect((await capture("P1", "12.5")).body).toMatchObject({ StatusCode: 10 });
    expect((await capture("P1", "12.50")).status).toBe(200);
    expect((await capture("P1", "12.50")).status).toBe(200);
    expect((await capture("P1", "13.00")).body).toMatchObject({ StatusCode: 50 });
    expect((await cancel("P1")).body).toMatchObject({ StatusCode: 50 });
    expect(w.ledger.entries().map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 3000],
      ["captured", 1250],
    ]);
  });

  it("capture before 100 and of an unknown OrderId → 50; unknown PoS → 30", async () => {
    await start("N1", "5.00");
    expect((await capture("N1", "0.00")).body).toMatchObject({ StatusCode: 50 });
    expect((await capture("nope", "0.00")).body).toMatchObject({ StatusCode: 50 });
    expect(
      (await call("ReservationCapture", { ...IDS, PoSId: "x", OrderId: "N1", Amount: "0.00", BulkRef: "" }))
        .body,
    ).toMatchObject({ StatusCode: 30 });
  });

  it("reject → 40, insufficient funds → 50, no accept within 300 s → 40", async () => {
    await start("X1", "5.00");
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.reject(UNIT);
    expect(await status("X1")).toBe(40);
    await start("X2", "5.00");
    w.legacy.checkin(UNIT, user("06"));
    w.legacy.accept(UNIT, user("06"));
    expect(await status("X2")).toBe(50);
    await start("X3", "5.00");
    w.clock.advance(300_000);
    expect(await status("X3")).toBe(40);
    expect(w.ledger.entries()).toEqual([]);
  });

  it("a loyalty member gets a CustomerToken at start", async () => {
    w.legacy.checkin(UNIT, user("04"));
    expect((await start("Y1", "5.00")).body).toEqual({ CustomerToken: expect.stringMatching(/^LOY\d{10}$/) });
    expect(await status("Y1")).toBe(20);
  });
});

describe("ReservationStart rules (seed: 10, 30, 40, 50)", () => {
  it("busy PoS → 50, accepted OrderId → 40, unknown PoS → 30, bad CaptureType → 10", async () => {
    await start("B1", "5.00");
    expect((await start("B2", "5.00")).body).toMatchObject({ StatusCode: 50 });
    expect((await start("B1", "5.00")).body).toMatchObject({ StatusCode: 50 });
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.accept(UNIT, user("01"));
    expect((await start("B1", "5.00")).body).toMatchObject({ StatusCode: 40 });
    expect(
      (
        await call("ReservationStart", {
          ...IDS,
          PoSId: "x",
          OrderId: "B3",
          Amount: "1.00",
          BulkRef: "",
          CaptureType: "Full",
        })
      ).body,
    ).toMatchObject({ StatusCode: 30 });
    expect((await start("B3", "5.00", "full")).body).toMatchObject({ StatusCode: 10 });
  });

  it("an active payment blocks a reservation start and the other way round (one customer per PoS)", async () => {
    await start("M1", "5.00");
    const hmac = w.hmac({ posId: POS, orderId: "M2", amount: "1.00", bulkRef: "" });
    const pay = {
      ...IDS,
      OrderId: "M2",
      Amount: "1.00",
      BulkRef: "",
      Action: "Start",
      CustomerTokenCalc: 1,
      HMAC: hmac,
    };
    expect((await call("PaymentStart", pay)).body).toMatchObject({ StatusCode: 50 });
  });

  it("several Done reservations stay capturable by OrderId; GetCurrentReservation shows the newest", async () => {
    await reserve("D1", "10.00");
    await reserve("D2", "20.00");
    await reserve("D3", "30.00");
    const current = (await call("GetCurrentReservation", IDS)).body;
    expect(current).toEqual({
      PosId: POS,
      PosUnitId: UNIT,
      PaymentStatus: 100,
      OrderId: "D3",
      TransactionId: expect.any(String),
      Amount: 30,
      CustomerId: expect.any(String),
      CustomerToken: null,
      CustomerReceiptToken: null,
      LastestUpdate: "2023-11-14T22:13:20.000",
    });
    expect((await capture("D1", "0.00")).status).toBe(200);
    expect((await capture("D2", "0.00")).status).toBe(200);
    expect(
      w.ledger
        .entries()
        .filter((e) => e.kind === "captured")
        .map((e) => e.id),
    ).toEqual(["D1", "D2"]);
  });

  it("a new start deletes the earlier Cancel/Error reservation (reads 10)", async () => {
    await start("Z1", "5.00");
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.reject(UNIT);
    await start("Z2", "5.00");
    expect(await status("Z1")).toBe(10);
    expect(await status("unknown")).toBe(10);
  });
});

describe("ReservationCancel and the 7-day release (pos-legacy §7)", () => {
  it("before 100 → deleted (reads 10); in 100 → released (reads 40, `cancelled`); repeat → 200; unknown → 50", async () => {
    await start("K1", "5.00");
    expect(await cancel("K1")).toEqual({ status: 200, body: {} });
    expect(await status("K1")).toBe(10);
    expect((await call("GetCurrentReservation", IDS)).body).toMatchObject({
      PaymentStatus: 10,
      OrderId: null,
    });
    await reserve("K2", "7.00");
    expect((await cancel("K2")).status).toBe(200);
    expect(await status("K2")).toBe(40);
    expect((await cancel("K2")).status).toBe(200);
    expect((await capture("K2", "0.00")).body).toMatchObject({ StatusCode: 50 });
    expect((await cancel("K9")).body).toMatchObject({ StatusCode: 50 });
    expect(w.ledger.entries().map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 700],
      ["cancelled", 700],
    ]);
  });

  it("a Done reservation neither captured nor cancelled is released after 7 days on a clock tick (`expired`)", async () => {
    await reserve("T1", "9.00");
    w.clock.advance(7 * DAY - 1);
    expect(w.ledger.entries().map((e) => e.kind)).toEqual(["reserved"]);
    w.clock.advance(1);
    expect(w.ledger.entries().map((e) => e.kind)).toEqual(["reserved", "expired"]);
    expect(await status("T1")).toBe(40);
    expect((await capture("T1", "0.00")).body).toMatchObject({ StatusCode: 50 });
  });

  it("a captured reservation is not released and can be refunded by its OrderId", async () => {
    await reserve("T2", "9.00");
    await capture("T2", "0.00");
    w.clock.advance(8 * DAY);
    const refund = await call("PaymentRefund", { ...IDS, OrderId: "T2", Amount: "4.00", BulkRef: "" });
    expect(refund).toEqual({ status: 200, body: { Remainder: 5, TransactionId: expect.any(String) } });
    expect(w.ledger.entries().map((e) => e.kind)).toEqual(["reserved", "captured", "refunded"]);
  });
});
