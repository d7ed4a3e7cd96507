import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PaymentDriver, PaymentRef } from "../../../src/payment/driver.js";
import { isPaymentError } from "../../../src/payment/errors.js";
import {
  type Connected,
  type ContractWorld,
  type DriverKind,
  KINDS,
  pollUntil,
  reserve,
  startContractWorld,
  startRequest,
} from "./support.js";

/**
 * Contract: refunds (driver.ts `refund`). V10 refunds a captured reservation (flow R1, pos-v10 §8); the
 * older interface is exercised in `mode: payment`, where money moves at Done and a failed vend is
 * refunded (pos-legacy §8, §12).
 */
let w: ContractWorld;
beforeAll(async () => {
  w = await startContractWorld();
});
afterAll(() => w.close());

/** A payment whose money moved: V10 reserved and captured, older interface paid directly. */
async function moneyMoved(
  kind: DriverKind,
  c: Connected,
  orderId: string,
  amount: number,
): Promise<PaymentRef> {
  if (kind === "v10") {
    const ref = await reserve(w, c, orderId, amount);
    await c.driver.capture(ref, amount);
    return ref;
  }
  const ref = await c.driver.start(startRequest(orderId, amount, { mode: "payment" }));
  expect(ref.mode).toBe("payment");
  w.pay(c.pos);
  expect((await pollUntil(c.driver, ref, (o) => o.state === "paid")).state).toBe("paid");
  return ref;
}

const refundOf = (d: PaymentDriver, ref: PaymentRef, id: string, amount: number) =>
  d.refund({ ref, refundOrderId: id, amount, idempotencyKey: `key-${id}` });

const refunds = (orderId: string) => w.ledger(orderId).filter(([k]) => k === "refunded");

describe.each(KINDS)("%s driver: refunds", (kind) => {
  it("refund full: the whole amount, once", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await moneyMoved(kind, c, `${kind}-rf-full`, 1500);
    const r = await refundOf(c.driver, ref, `${kind}-rf-full-1`, 1500);
    expect(r.state).toBe("captured");
    expect(r.refundId).not.toBe("");
    // The older interface reports what is still refundable (Remainder); V10 does not say.
    expect(r.remainder).toBe(kind === "v10" ? null : 0);
    expect(refunds(ref.orderId)).toEqual([["refunded", 1500]]);
  });

  it("refund partial, then the rest; more than what is left is refused", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await moneyMoved(kind, c, `${kind}-rf-part`, 3000);
    const first = await refundOf(c.driver, ref, `${kind}-rf-part-1`, 1000);
    expect(first).toMatchObject({ state: "captured", remainder: kind === "v10" ? null : 2000 });
    const over = await refundOf(c.driver, ref, `${kind}-rf-part-2`, 2500).catch((e: unknown) => e);
    expect(isPaymentError(over, "refundRefused")).toBe(true);
    const rest = await refundOf(c.driver, ref, `${kind}-rf-part-3`, 2000);
    expect(rest).toMatchObject({ state: "captured", remainder: kind === "v10" ? null : 0 });
    expect(refunds(ref.orderId)).toEqual([
      ["refunded", 1000],
      ["refunded", 2000],
    ]);
  });

  it("a repeated refund call: V10 keys make it one refund; the older interface has no keys", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await moneyMoved(kind, c, `${kind}-rf-rep`, 800);
    const a = await refundOf(c.driver, ref, `${kind}-rf-rep-1`, 800);
    if (kind === "v10") {
      // pos-v10 §9: the same key returns the same refund.
      const b = await refundOf(c.driver, ref, `${kind}-rf-rep-1`, 800);
      expect(b.refundId).toBe(a.refundId);
    } else {
      // pos-legacy §11: no idempotency keys; a full refund is sent as "0.00" and a repeat is refused
      // with 3 (already refunded), never applied twice.
      const again = await refundOf(c.driver, ref, `${kind}-rf-rep-1`, 800).catch((e: unknown) => e);
      expect(isPaymentError(again, "refundRefused")).toBe(true);
    }
    expect(refunds(ref.orderId)).toEqual([["refunded", 800]]);
  });
});
