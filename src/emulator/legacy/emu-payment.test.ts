import { beforeEach, describe, expect, it } from "vitest";
import type { SimUser } from "../types.js";
import { defaultUsers } from "../users.js";
import { createStandaloneLegacy, type StandaloneLegacy } from "./harness.test-support.js";

const UNIT = "123456789012345";
const POS = "vend-unit-7";
const IDS = { MerchantId: "POSDK99999", LocationId: "88888" };
const user = (suffix: string): SimUser => {
  const u = defaultUsers().find((x) => x.phone === `+45200318${suffix}`);
  if (!u) throw new Error(`no user ${suffix}`);
  return u;
};

let w: StandaloneLegacy;
const call = (op: string, body: unknown) => w.client.call(op, body);

function start(orderId: string, amount: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const bulkRef = typeof over.BulkRef === "string" ? over.BulkRef : "";
  const hmac = w.hmac({ posId: POS, orderId, amount, bulkRef });
  return {
    ...IDS,
    PoSId: POS,
    OrderId: orderId,
    Amount: amount,
    BulkRef: bulkRef,
    Action: "Start",
    CustomerTokenCalc: 1,
    HMAC: hmac,
    ...over,
  };
}
const status = async (orderId: string) =>
  (await call("GetPaymentStatus", { ...IDS, PoSId: POS, OrderId: orderId })).body as Record<string, unknown>;

beforeEach(async () => {
  w = createStandaloneLegacy();
  expect((await call("RegisterPoS", { ...IDS, PoSId: POS, Name: "Machine 7" })).status).toBe(200);
  expect((await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: POS, PoSUnitId: UNIT })).status).toBe(200);
});

describe("PaymentStart → Done (pos-legacy §6)", () => {
  it("start before check-in waits in 30, check-in issues 20, accept goes to 100 and records `paid`", async () => {
    expect(await call("PaymentStart", start("A1", "12.50"))).toEqual({
      status: 200,
      body: { ReCalc: 0, CustomerToken: null, CustomerReceiptToken: null },
    });
    expect((await status("A1")).PaymentStatus).toBe(30);
    expect(w.legacy.checkin(UNIT, user("01")).status).toBe(200);
    expect((await status("A1")).PaymentStatus).toBe(20);
    expect(w.legacy.accept(UNIT, user("01")).status).toBe(200);
    const done = await status("A1");
    expect(done).toMatchObject({
      PoSId: POS,
      PaymentStatus: 100,
      OrderId: "A1",
      Amount: 12.5,
      PaymentSignature: null,
    });
    expect(typeof done.TransactionId).toBe("string");
    expect(typeof done.CustomerId).toBe("string");
    expect(w.ledger.entries()).toMatchObject([
      { interface: "legacy", kind: "paid", id: "A1", orderId: "A1", amount: 1250 },
    ]);
  });

  it("check-in first issues at once (20) and fills the receipt token", async () => {
    w.legacy.checkin(UNIT, user("03"));
    const res = await call("PaymentStart", start("A2", "5.00"));
    expect(res.body).toMatchObject({ ReCalc: 0, CustomerToken: null });
    expect((res.body as Record<string, unknown>).CustomerReceiptToken).toMatch(/^RCPT-/);
    expect((await status("A2")).PaymentStatus).toBe(20);
  });

  it("shows 80 between accept and confirmation when confirmation takes time", async () => {
    w = createStandaloneLegacy({ acceptToDoneMs: 2000 });
    await call("RegisterPoS", { ...IDS, PoSId: POS, Name: "Machine 7" });
    await call("AssignPoSUnitIdToPos", { ...IDS, PoSId: POS, PoSUnitId: UNIT });
    await call("PaymentStart", start("A3", "1.00"));
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.accept(UNIT, user("01"));
    expect((await status("A3")).PaymentStatus).toBe(80);
    w.clock.advance(2000);
    expect((await status("A3")).PaymentStatus).toBe(100);
  });

  it("user rejects → 40; insufficient funds → 50; a 20 not accepted in 300 s → 40", async () => {
    await call("PaymentStart", start("R1", "1.00"));
    w.legacy.checkin(UNIT, user("01"));
    expect(w.legacy.reject(UNIT).status).toBe(200);
    expect((await status("R1")).PaymentStatus).toBe(40);
    await call("PaymentStart", start("R2", "1.00"));
    w.legacy.checkin(UNIT, user("06"));
    w.legacy.accept(UNIT, user("06"));
    expect((await status("R2")).PaymentStatus).toBe(50);
    await call("PaymentStart", start("R3", "1.00"));
    w.clock.advance(299_000);
    expect((await status("R3")).PaymentStatus).toBe(30);
    w.clock.advance(1000);
    expect((await status("R3")).PaymentStatus).toBe(40);
    expect(w.ledger.entries()).toEqual([]);
  });

  it("user simulation answers 409 when nothing is issued and for another user", async () => {
    expect(w.legacy.accept(UNIT, user("01")).status).toBe(409);
    expect(w.legacy.reject(UNIT).status).toBe(409);
    await call("PaymentStart", start("U1", "1.00"));
    w.legacy.checkin(UNIT, user("01"));
    expect(w.legacy.accept(UNIT, user("02")).status).toBe(409);
    expect(w.legacy.checkin("999999999999999", user("01")).status).toBe(404);
    expect(w.legacy.ownsBeacon(UNIT)).toBe(true);
    expect(w.legacy.ownsBeacon("999999999999999")).toBe(false);
  });
});

describe("loyalty: AwaitTokenRecalc (60) and Action Update", () => {
  it("member checked in with CustomerTokenCalc 0 → ReCalc 1, 60; Update → 20; Done with the new amount", async () => {
    w.legacy.checkin(UNIT, user("04"));
    const res = await call("PaymentStart", start("L1", "20.00", { CustomerTokenCalc: 0 }));
    expect(res.body).toMatchObject({ ReCalc: 1, CustomerToken: expect.stringMatching(/^LOY\d{10}$/) });
    expect((await status("L1")).PaymentStatus).toBe(60);
    expect(w.legacy.accept(UNIT, user("04")).status).toBe(409);
    const upd = await call(
      "PaymentStart",
      start("L1", "18.00", { Action: "Update", CustomerTokenCalc: "1" }),
    );
    expect(upd.status).toBe(200);
    expect((await status("L1")).PaymentStatus).toBe(20);
    w.legacy.accept(UNIT, user("04"));
    expect(await status("L1")).toMatchObject({ PaymentStatus: 100, Amount: 18 });
  });

  it("a member checking in on a waiting payment with CustomerTokenCalc 0 moves 30 → 60", async () => {
    await call("PaymentStart", start("L2", "20.00", { CustomerTokenCalc: "0" }));
    w.legacy.checkin(UNIT, user("04"));
    expect(await status("L2")).toMatchObject({
      PaymentStatus: 60,
      CustomerToken: expect.stringMatching(/^LOY/),
    });
  });

  it("CustomerTokenCalc 1 ignores loyalty; Update without a 60 entity is refused", async () => {
    w.legacy.checkin(UNIT, user("04"));
    await call("PaymentStart", start("L3", "20.00"));
    expect((await status("L3")).PaymentStatus).toBe(20);
    expect((await call("PaymentStart", start("L3", "20.00", { Action: "Update" }))).body).toMatchObject({
      StatusCode: 50,
    });
    await call("PaymentCancel", { ...IDS, PoSId: POS });
    expect((await call("PaymentStart", start("L3", "20.00", { Action: "Update" }))).body).toMatchObject({
      StatusCode: 10,
    });
  });
});

describe("PaymentStart errors (seed: 10, 30, 40, 50)", () => {
  it("bad HMAC → 10, unknown PoS → 30, paid OrderId → 40, busy PoS → 50, none changes state", async () => {
    const bad = await call("PaymentStart", {
      ...start("E1", "1.00"),
      HMAC: w.hmac({ posId: POS, orderId: "E1", amount: "2.00", bulkRef: "" }),
    });
    expect(bad).toEqual({
      status: 400,
      body: { StatusCode: 10, StatusText: expect.stringContaining("HMAC") },
    });
    expect((await status("E1")).PaymentStatus).toBe(10);
    const unknown = await call("PaymentStart", { ...start("E1", "1.00"), PoSId: "nope" });
    expect(unknown.body).toMatchObject({ StatusCode: 30 });
    await call("PaymentStart", start("E1", "1.00"));
    expect((await call("PaymentStart", start("E2", "1.00"))).body).toMatchObject({ StatusCode: 50 });
    expect((await call("PaymentStart", start("E1", "1.00"))).body).toMatchObject({ StatusCode: 50 });
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.accept(UNIT, user("01"));
    expect((await call("PaymentStart", start("E1", "1.00"))).body).toMatchObject({ StatusCode: 40 });
    expect((await call("GetCurrentPayment", { ...IDS, PoSId: POS })).body).toMatchObject({
      OrderId: "E1",
      PaymentStatus: 100,
    });
  });

  it("amount format and range are checked exactly (10)", async () => {
    for (const amount of ["12.5", "12", "1,00", "0.00", "-1.00", 12.5]) {
      const res = await call("PaymentStart", { ...start("F1", "1.00"), Amount: amount });
      expect(res.body).toMatchObject({ StatusCode: 10 });
    }
    expect((await call("PaymentStart", start("F1", "1.00", { CustomerTokenCalc: 2 }))).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await call("PaymentStart", start("F1", "1.00", { Action: "start" }))).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await call("PaymentStart", start("F1".repeat(17), "1.00"))).body).toMatchObject({
      StatusCode: 10,
    });
    expect((await call("PaymentStart", start("F1", "1.00", { BulkRef: "x".repeat(19) }))).body).toMatchObject(
      { StatusCode: 10 },
    );
    expect((await status("F1")).PaymentStatus).toBe(10);
  });
});

describe("PaymentCancel and GetCurrentPayment", () => {
  it("cancels an active entity (reads 10), refuses Done and no entity with 50", async () => {
    expect((await call("PaymentCancel", { ...IDS, PoSId: POS })).body).toMatchObject({ StatusCode: 50 });
    await call("PaymentStart", start("C1", "3.00"));
    expect(await call("PaymentCancel", { ...IDS, PoSId: POS })).toEqual({ status: 200, body: {} });
    expect((await status("C1")).PaymentStatus).toBe(10);
    await call("PaymentStart", start("C2", "3.00"));
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.accept(UNIT, user("01"));
    expect((await call("PaymentCancel", { ...IDS, PoSId: POS })).body).toMatchObject({ StatusCode: 50 });
    expect((await call("PaymentCancel", { ...IDS, PoSId: "nope" })).body).toMatchObject({ StatusCode: 30 });
  });

  it("GetCurrentPayment uses DD-MM-YYYY HH:mm:ss and the seed's casing; a new start replaces a finished entity", async () => {
    expect((await call("GetCurrentPayment", { ...IDS, PoSId: POS })).body).toMatchObject({
      PaymentStatus: 10,
      OrderId: null,
    });
    await call("PaymentStart", start("G1", "3.00"));
    expect((await call("GetCurrentPayment", { ...IDS, PoSId: POS })).body).toEqual({
      PoSId: POS,
      PoSUnitId: UNIT,
      PaymentStatus: 30,
      OrderId: "G1",
      TransactionId: null,
      Amount: 3,
      CustomerId: null,
      CustomerToken: null,
      CustomerReceiptToken: null,
      LatestUpdate: "14-11-2023 22:13:20",
    });
    w.legacy.reject(UNIT);
    w.legacy.checkin(UNIT, user("01"));
    w.legacy.reject(UNIT);
    expect((await status("G1")).PaymentStatus).toBe(40);
    await call("PaymentStart", start("G2", "3.00"));
    expect((await status("G1")).PaymentStatus).toBe(10);
    expect((await call("GetCurrentPayment", { ...IDS, PoSId: "nope" })).body).toMatchObject({
      StatusCode: 10,
    });
  });
});
