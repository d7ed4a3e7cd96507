import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FaultKind } from "../../emulator/http/faults.js";
import { isPaymentError } from "../errors.js";
import { type LegacyTestWorld, legacyTestWorld } from "./legacy.test-support.js";

/** pos-legacy §11: after a lost answer the driver queries before it repeats; the ledger shows one effect. */

let w: LegacyTestWorld;
beforeEach(async () => {
  w = await legacyTestWorld({ requestTimeoutMs: 300 });
  await w.driver.open();
});
afterEach(() => w.close());

const sent = (op: string) => w.emu.stats().byRoute[`POST /API/V08/${op}`] ?? 0;
const fault = (op: string, kind: FaultKind, applied = true) =>
  w.emu.faults.add({ method: "POST", path: `/API/V08/${op}`, fault: kind, applied });

describe.each(["reset", "lost", "500"] as const)("lost answer (%s)", (kind) => {
  it("ReservationStart applied: no second start, one reservation", async () => {
    fault("ReservationStart", kind);
    const ref = await w.driver.start({ orderId: "L-1", amount: 1000, idempotencyKey: "k" });
    w.pay();
    expect((await w.driver.status(ref)).state).toBe("reserved");
    expect(w.ledger()).toEqual([["reserved", "L-1", 1000]]);
    expect(sent("ReservationStart")).toBe(1);
  });

  it("ReservationStart not applied: status 10, sent again", async () => {
    fault("ReservationStart", kind, false);
    const ref = await w.driver.start({ orderId: "L-2", amount: 1000, idempotencyKey: "k" });
    expect((await w.driver.status(ref)).state).toBe("pending");
    expect(sent("ReservationStart")).toBe(2);
  });

  it("PaymentStart applied and not applied", async () => {
    fault("PaymentStart", kind);
    const a = await w.driver.start({ orderId: "L-3", amount: 400, idempotencyKey: "k", mode: "payment" });
    w.pay();
    expect((await w.driver.status(a)).state).toBe("paid");
    fault("PaymentStart", kind, false);
    const b = await w.driver.start({ orderId: "L-4", amount: 400, idempotencyKey: "k", mode: "payment" });
    expect((await w.driver.status(b)).state).toBe("pending");
    expect(w.ledger()).toEqual([["paid", "L-3", 400]]);
  });

  it("ReservationCapture applied: the identical repeat answers 200, one capture", async () => {
    const ref = await w.driver.start({ orderId: "L-5", amount: 1000, idempotencyKey: "k" });
    w.pay();
    fault("ReservationCapture", kind);
    await w.driver.capture(ref, 1000);
    expect(w.ledger()).toEqual([
      ["reserved", "L-5", 1000],
      ["captured", "L-5", 1000],
    ]);
  });

  it("ReservationCancel applied (reads 40) and PaymentCancel applied (reads 10): done, no repeat", async () => {
    const ref = await w.driver.start({ orderId: "L-6", amount: 1000, idempotencyKey: "k" });
    w.pay();
    fault("ReservationCancel", kind);
    await w.driver.cancel(ref);
    const p = await w.driver.start({ orderId: "L-7", amount: 300, idempotencyKey: "k", mode: "payment" });
    fault("PaymentCancel", kind);
    await w.driver.cancel(p);
    expect((await w.driver.status(p)).state).toBe("pending");
    expect(w.ledger()).toEqual([
      ["reserved", "L-6", 1000],
      ["cancelled", "L-6", 1000],
    ]);
  });

  it("ReservationCancel not applied: sent again", async () => {
    const ref = await w.driver.start({ orderId: "L-8", amount: 1000, idempotencyKey: "k" });
    w.pay();
    fault("ReservationCancel", kind, false);
    await w.driver.cancel(ref);
    expect(w.ledger().map((e) => e[0])).toEqual(["reserved", "cancelled"]);
  });

  it("full PaymentRefund applied: the repeat answers 3 (already refunded) → done, one refund", async () => {
    const ref = await w.driver.start({ orderId: "L-9", amount: 600, idempotencyKey: "k", mode: "payment" });
    w.pay();
    fault("PaymentRefund", kind);
    expect(
      await w.driver.refund({ ref, refundOrderId: "r", amount: 600, idempotencyKey: "k" }),
    ).toMatchObject({
      remainder: 0,
    });
    expect(w.ledger()).toEqual([
      ["paid", "L-9", 600],
      ["refunded", "L-9", 600],
    ]);
  });

  it("partial PaymentRefund lost: not repeated, thrown as ambiguous", async () => {
    const ref = await w.driver.start({ orderId: "L-10", amount: 600, idempotencyKey: "k", mode: "payment" });
    w.pay();
    fault("PaymentRefund", kind);
    const err = await w.driver
      .refund({ ref, refundOrderId: "r", amount: 100, idempotencyKey: "k" })
      .catch((e) => e);
    expect(isPaymentError(err, "unavailable") && err.ambiguous).toBe(true);
    // The lost send's own error is kept as the cause (ES2022), not folded into the message only.
    expect(isPaymentError(err.cause, "unavailable") && err.cause.ambiguous).toBe(true);
    expect(w.ledger()).toEqual([
      ["paid", "L-10", 600],
      ["refunded", "L-10", 100],
    ]);
  });
});

describe("timeouts and the repeat's own failures", () => {
  it("a hung start times out, is resolved by status, and is not duplicated", async () => {
    fault("ReservationStart", "hang");
    const ref = await w.driver.start({ orderId: "H-1", amount: 100, idempotencyKey: "k" });
    expect((await w.driver.status(ref)).state).toBe("pending");
    expect(sent("ReservationStart")).toBe(1);
  });

  it("a lost capture whose repeat is refused is reported as 'probably captured' (ambiguous conflict)", async () => {
    const ref = await w.driver.start({
      orderId: "H-2",
      amount: 1000,
      idempotencyKey: "k",
      captureType: "partial",
    });
    w.pay();
    // A capture of 3.00 already happened (e.g. sent before a restart); this one's answer is lost and the
    // identical repeat is refused with 50 because the amounts differ: the driver cannot tell, so it flags.
    await w.driverWith({ captureType: "partial" }).capture(ref, 300);
    fault("ReservationCapture", "reset", false);
    const err = await w.driver.capture(ref, 400).catch((e) => e);
    expect(isPaymentError(err, "conflict") && err.ambiguous).toBe(true);
    expect(err.details).toMatchObject({ serviceCode: "50" });
    // Its cause is the refusal of the repeat, as the service answered it.
    expect(isPaymentError(err.cause, "conflict") && !err.cause.ambiguous).toBe(true);
    expect(err.cause.details).toMatchObject({ status: 400, serviceCode: "50" });
    expect(w.ledger().filter((e) => e[0] === "captured")).toEqual([["captured", "H-2", 300]]);
  });

  it("a status query that also fails surfaces as ambiguous unavailable", async () => {
    fault("ReservationStart", "reset");
    fault("GetReservationStatus", "reset");
    const err = await w.driver.start({ orderId: "H-3", amount: 100, idempotencyKey: "k" }).catch((e) => e);
    expect(isPaymentError(err, "unavailable") && err.ambiguous).toBe(true);
    expect(sent("ReservationStart")).toBe(1);
  });
});
