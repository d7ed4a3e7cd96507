import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isPaymentError } from "../errors.js";
import { type LegacyTestWorld, legacyTestWorld } from "./legacy.test-support.js";

/** pos-legacy §10: a start answered 50 ("already in progress"). */

let w: LegacyTestWorld;
beforeEach(async () => {
  w = await legacyTestWorld();
  await w.driver.open();
});
afterEach(() => w.close());

const sent = (op: string) => w.emu.stats().byRoute[`POST /API/V08/${op}`] ?? 0;

describe("busy-PoS recovery", () => {
  it("a stranger's payment is cancelled and the start repeated once", async () => {
    const stranger = await w
      .driverWith({})
      .start({ orderId: "X-1", amount: 100, idempotencyKey: "k", mode: "payment" });
    const ref = await w.driver.start({ orderId: "O-1", amount: 200, idempotencyKey: "k", mode: "payment" });
    expect(await w.driver.status(ref)).toMatchObject({ state: "pending", amount: 200 });
    expect(await w.driver.lookup(stranger.orderId)).toBeNull();
    expect(sent("PaymentCancel")).toBe(1);
    expect(sent("PaymentStart")).toBe(3);
  });

  it("a stranger's reservation is found with GetCurrentReservation and cancelled by its OrderId", async () => {
    await w.driverWith({}).start({ orderId: "X-2", amount: 100, idempotencyKey: "k" });
    const ref = await w.driver.start({ orderId: "O-2", amount: 200, idempotencyKey: "k" });
    expect((await w.driver.status(ref)).state).toBe("pending");
    expect(await w.driver.lookup("X-2")).toBeNull();
    expect(sent("ReservationCancel")).toBe(1);
  });

  it("an entity the journal owns is not cancelled: busy", async () => {
    w.owned.add("X-3");
    const mine = await w.driverWith({}).start({ orderId: "X-3", amount: 100, idempotencyKey: "k" });
    const err = await w.driver.start({ orderId: "O-3", amount: 200, idempotencyKey: "k" }).catch((e) => e);
    expect(isPaymentError(err, "busy")).toBe(true);
    expect((await w.driver.status(mine)).state).toBe("pending");
    expect(sent("ReservationCancel")).toBe(0);
  });

  it("our own order in progress (a repeated start) resolves to the same ref without a cancel", async () => {
    const a = await w.driver.start({ orderId: "O-4", amount: 200, idempotencyKey: "k" });
    const b = await w.driver.start({ orderId: "O-4", amount: 200, idempotencyKey: "k" });
    expect(b).toEqual(a);
    expect(sent("ReservationCancel")).toBe(0);
    w.pay();
    expect(w.ledger()).toEqual([["reserved", "O-4", 200]]);
  });

  it("an already accepted OrderId is a conflict (StatusCode 40)", async () => {
    const a = await w.driver.start({ orderId: "O-5", amount: 200, idempotencyKey: "k", mode: "payment" });
    w.pay();
    expect((await w.driver.status(a)).state).toBe("paid");
    const err = await w.driver
      .start({ orderId: "O-5", amount: 200, idempotencyKey: "k", mode: "payment" })
      .catch((e) => e);
    expect(isPaymentError(err, "conflict")).toBe(true);
    expect(err.details).toMatchObject({ status: 400, serviceCode: "40" });
  });
});
