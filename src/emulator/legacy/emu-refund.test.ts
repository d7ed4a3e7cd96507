import { beforeEach, describe, expect, it } from "vitest";
import { defaultUsers } from "../users.js";
import { createStandaloneLegacy, type StandaloneLegacy } from "./harness.test-support.js";

const UNIT = "123456789012345";
const POS = "vend-unit-7";
const IDS = { MerchantId: "POSDK99999", LocationId: "88888", PoSId: POS };
const DAY = 24 * 3600_000;

let w: StandaloneLegacy;
const call = (op: string, body: unknown) => w.client.call(op, body);
const refund = (OrderId: string, Amount: string, over: Record<string, unknown> = {}) =>
  call("PaymentRefund", { ...IDS, OrderId, Amount, BulkRef: "ignored", ...over });

async function pay(orderId: string, amount: string): Promise<void> {
  const HMAC = w.hmac({ posId: POS, orderId, amount, bulkRef: "" });
  const res = await call("PaymentStart", {
    ...IDS,
    OrderId: orderId,
    Amount: amount,
    BulkRef: "",
    Action: "Start",
    CustomerTokenCalc: 1,
    HMAC,
  });
  expect(res.status).toBe(200);
  const u = defaultUsers()[0];
  if (!u) throw new Error("no users");
  w.legacy.checkin(UNIT, u);
  expect(w.legacy.accept(UNIT, u).status).toBe(200);
}

beforeEach(async () => {
  w = createStandaloneLegacy();
  await call("RegisterPoS", { ...IDS, Name: "Machine 7" });
  await call("AssignPoSUnitIdToPos", { ...IDS, PoSUnitId: UNIT });
});

describe("PaymentRefund (seed; pos-legacy §8)", () => {
  it("partial refunds report the Remainder; the rest with 0.00; then 3 already refunded", async () => {
    await pay("F1", "10.00");
    expect(await refund("F1", "2.50")).toEqual({
      status: 200,
      body: { Remainder: 7.5, TransactionId: expect.any(String) },
    });
    expect((await refund("F1", "7.51")).body).toMatchObject({ StatusCode: 2 });
    expect((await refund("F1", "0.00")).body).toMatchObject({ Remainder: 0 });
    expect((await refund("F1", "0.00")).body).toMatchObject({ StatusCode: 3 });
    expect((await refund("F1", "1.00")).body).toMatchObject({ StatusCode: 3 });
    const refunds = w.ledger.entries().filter((e) => e.kind === "refunded");
    expect(refunds.map((e) => [e.id, e.paymentId, e.amount])).toEqual([
      ["F1", "F1", 250],
      ["F1", "F1", 750],
    ]);
  });

  it('an empty Amount "" refunds everything', async () => {
    await pay("F2", "4.00");
    expect((await refund("F2", "")).body).toMatchObject({ Remainder: 0 });
  });

  it("not paid, unknown or older than 3 months → 1; exactly 3 months → allowed", async () => {
    expect((await refund("none", "0.00")).body).toMatchObject({ StatusCode: 1 });
    const HMAC = w.hmac({ posId: POS, orderId: "F3", amount: "1.00", bulkRef: "" });
    await call("PaymentStart", {
      ...IDS,
      OrderId: "F3",
      Amount: "1.00",
      BulkRef: "",
      Action: "Start",
      CustomerTokenCalc: 1,
      HMAC,
    });
    expect((await refund("F3", "0.00")).body).toMatchObject({ StatusCode: 1 });
    await call("PaymentCancel", IDS);
    await pay("F4", "1.00");
    await pay("F5", "1.00");
    // 2023-11-14 + 3 months = 2024-02-14 (calendar months, UTC).
    w.clock.advance(92 * DAY);
    expect((await refund("F4", "0.00")).status).toBe(200);
    w.clock.advance(1);
    expect((await refund("F5", "0.00")).body).toMatchObject({ StatusCode: 1 });
  });

  it("bad amount → 10; unknown PoS → 30; another PoS's order → 50; armed technical error → 99 without effect", async () => {
    await pay("F6", "3.00");
    expect((await refund("F6", "1.5")).body).toMatchObject({ StatusCode: 10 });
    expect((await refund("F6", "1.00", { BulkRef: undefined })).body).toMatchObject({ StatusCode: 10 });
    expect((await refund("F6", "1.00", { PoSId: "nope" })).body).toMatchObject({ StatusCode: 30 });
    await call("RegisterPoS", { ...IDS, PoSId: "other", Name: "Other" });
    expect((await refund("F6", "1.00", { PoSId: "other" })).body).toMatchObject({ StatusCode: 50 });
    w.legacy.armFault("PaymentRefund", 99);
    expect(await refund("F6", "1.00")).toEqual({
      status: 400,
      body: { StatusCode: 99, StatusText: expect.any(String) },
    });
    expect((await refund("F6", "1.00")).body).toMatchObject({ Remainder: 2 });
  });

  it("GetPaymentStatus still reads 100 for a refunded order after a new payment replaced the slot", async () => {
    await pay("F7", "3.00");
    await refund("F7", "0.00");
    await pay("F8", "3.00");
    const body = (await call("GetPaymentStatus", { ...IDS, OrderId: "F7" })).body;
    expect(body).toMatchObject({ PaymentStatus: 100, OrderId: "F7", Amount: 3 });
  });
});
