import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isPaymentError } from "../errors.js";
import { type LegacyTestWorld, legacyTestWorld, PAYER, POS_ID, UNIT } from "./legacy.test-support.js";

let w: LegacyTestWorld;
beforeEach(async () => {
  w = await legacyTestWorld();
  expect(await w.driver.open()).toEqual({ beaconId: UNIT, posId: POS_ID, name: "Machine 7" });
});
afterEach(() => w.close());

describe("open (pos-legacy §9)", () => {
  it("is idempotent and re-assigns the unit when another PoS took it", async () => {
    expect(await w.driver.open()).toEqual({ beaconId: UNIT, posId: POS_ID, name: "Machine 7" });
    const other = w.driverWith({ posId: "other-pos", posName: "Other" });
    await other.open();
    expect(w.emu.userSimulation.checkin(UNIT, PAYER).status).toBe(200);
    await w.driver.open();
    const ref = await w.driver.start({ orderId: "O-1", amount: 100, idempotencyKey: "k" });
    expect((await w.driver.status(ref)).state).toBe("pending");
  });

  it("reports no check-in: the older interface has none", async () => {
    expect(await w.driver.checkin()).toEqual({ checkedIn: false, pollDelayMs: 1000 });
  });
});

describe("reservation flows", () => {
  it("complete, Full: pending → issued → reserved → capture of the whole amount", async () => {
    const ref = await w.driver.start({ orderId: "R-1", amount: 1250, idempotencyKey: "k" });
    expect(ref).toEqual({ id: "R-1", orderId: "R-1", mode: "reservation", captureType: "full" });
    expect(await w.driver.status(ref)).toMatchObject({ state: "pending", amount: 1250, pollDelayMs: 1000 });
    w.emu.userSimulation.checkin(UNIT, PAYER);
    expect((await w.driver.status(ref)).state).toBe("issued");
    w.emu.userSimulation.accept(UNIT, PAYER);
    expect(await w.driver.status(ref)).toMatchObject({ state: "reserved", partialCapturePossible: false });
    await expect(w.driver.capture(ref, 1000)).rejects.toSatisfy((e) =>
      isPaymentError(e, "partialCaptureNotPossible"),
    );
    await expect(w.driver.capture(ref, 1300)).rejects.toSatisfy((e) => isPaymentError(e, "invalid"));
    await w.driver.capture(ref, 1250);
    await w.driver.capture(ref, 1250);
    expect(w.ledger()).toEqual([
      ["reserved", "R-1", 1250],
      ["captured", "R-1", 1250],
    ]);
  });

  it("capture partial", async () => {
    const ref = await w.driver.start({
      orderId: "R-2",
      amount: 3000,
      idempotencyKey: "k",
      captureType: "partial",
    });
    w.pay();
    expect(await w.driver.status(ref)).toMatchObject({ state: "reserved", partialCapturePossible: true });
    await w.driver.capture(ref, 1700);
    expect(w.ledger()).toEqual([
      ["reserved", "R-2", 3000],
      ["captured", "R-2", 1700],
    ]);
  });

  it("user rejects → cancelled (user); the cancel after it resolves", async () => {
    const ref = await w.driver.start({ orderId: "R-3", amount: 500, idempotencyKey: "k" });
    w.emu.userSimulation.checkin(UNIT, PAYER);
    w.emu.userSimulation.reject(UNIT);
    expect(await w.driver.status(ref)).toMatchObject({ state: "cancelled", cancelReason: "user" });
    await w.driver.cancel(ref);
    expect(w.ledger()).toEqual([]);
  });

  it("client cancel before acceptance deletes it (lookup → null); after reserved it releases the funds", async () => {
    const a = await w.driver.start({ orderId: "R-4", amount: 500, idempotencyKey: "k" });
    await w.driver.cancel(a);
    expect(await w.driver.lookup("R-4")).toBeNull();
    const b = await w.driver.start({ orderId: "R-5", amount: 700, idempotencyKey: "k" });
    w.pay();
    await w.driver.cancel(b);
    await w.driver.cancel(b);
    expect((await w.driver.status(b)).state).toBe("cancelled");
    await expect(w.driver.capture(b, 700)).rejects.toSatisfy((e) => isPaymentError(e, "conflict"));
    expect(w.ledger()).toEqual([
      ["reserved", "R-5", 700],
      ["cancelled", "R-5", 700],
    ]);
  });

  it("lookup and findActive see the PoS's entities", async () => {
    expect(await w.driver.findActive()).toEqual([]);
    const ref = await w.driver.start({ orderId: "R-6", amount: 900, idempotencyKey: "k" });
    expect(await w.driver.lookup("R-6")).toMatchObject({ ref, state: "pending", amount: 900 });
    expect(await w.driver.findActive()).toMatchObject([{ ref, state: "pending" }]);
    w.pay();
    expect(await w.driver.findActive()).toMatchObject([{ ref, state: "reserved" }]);
  });
});

describe("direct payment flows", () => {
  it("complete → paid, refund partial then the rest (full) with Remainder", async () => {
    const ref = await w.driver.start({ orderId: "P-1", amount: 2000, idempotencyKey: "k", mode: "payment" });
    expect((await w.driver.status(ref)).state).toBe("pending");
    w.pay();
    expect(await w.driver.status(ref)).toMatchObject({ state: "paid", amount: 2000 });
    expect(await w.driver.lookup("P-1")).toMatchObject({ ref, state: "paid" });
    const part = await w.driver.refund({ ref, refundOrderId: "P-1-r1", amount: 500, idempotencyKey: "k" });
    expect(part).toMatchObject({ state: "captured", remainder: 1500, refundId: expect.any(String) });
    const rest = await w.driver.refund({ ref, refundOrderId: "P-1-r2", amount: 1500, idempotencyKey: "k" });
    expect(rest.remainder).toBe(0);
    await expect(
      w.driver.refund({ ref, refundOrderId: "x", amount: 1, idempotencyKey: "k" }),
    ).rejects.toSatisfy((e) => isPaymentError(e, "refundRefused"));
    expect(w.ledger()).toEqual([
      ["paid", "P-1", 2000],
      ["refunded", "P-1", 500],
      ["refunded", "P-1", 1500],
    ]);
  });

  it("full refund is sent as 0.00; cancel before Done; cancel of Done refused", async () => {
    const a = await w.driver.start({ orderId: "P-2", amount: 800, idempotencyKey: "k", mode: "payment" });
    await w.driver.cancel(a);
    expect((await w.driver.status(a)).state).toBe("pending");
    expect(await w.driver.lookup("P-2")).toBeNull();
    const b = await w.driver.start({ orderId: "P-3", amount: 800, idempotencyKey: "k", mode: "payment" });
    w.pay();
    await expect(w.driver.cancel(b)).rejects.toSatisfy((e) => isPaymentError(e, "conflict"));
    expect(
      (await w.driver.refund({ ref: b, refundOrderId: "r", amount: 800, idempotencyKey: "k" })).remainder,
    ).toBe(0);
    await expect(w.driver.capture(b, 800)).rejects.toSatisfy((e) => isPaymentError(e, "invalid"));
  });

  it("user with insufficient funds → failed", async () => {
    const ref = await w.driver.start({ orderId: "P-4", amount: 800, idempotencyKey: "k", mode: "payment" });
    w.emu.userSimulation.checkin(UNIT, "+4520031806");
    w.emu.userSimulation.accept(UNIT, "+4520031806");
    expect((await w.driver.status(ref)).state).toBe("failed");
    await w.driver.cancel(ref);
    expect((await w.driver.status(ref)).state).toBe("pending");
  });
});
