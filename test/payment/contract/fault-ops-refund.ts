import { expect } from "vitest";
import { settlePayment } from "../../../src/engine/payments.js";
import { isPaymentError } from "../../../src/payment/errors.js";
import {
  AMOUNT,
  deps,
  expectRefusal,
  type FaultOp,
  PART,
  paid,
  refunds,
  settleRequest,
} from "./fault-kit.js";
import { reserve } from "./support.js";

/** Fault-matrix rows for refunds (V10 flow R1, pos-v10 §8; older-interface PaymentRefund, pos-legacy §8, §11). */

/** V10 refund flow R1: the create (`POST /v10/refunds`, keyed) or the refund's capture (naturally idempotent). */
export function v10RefundOp(step: "create" | "capture"): FaultOp {
  return {
    id: step === "create" ? "refund" : "refundCap",
    label: `refund, partial: ${step === "create" ? "create" : "refund capture"} (driver: same key on every retry)`,
    kinds: ["v10"],
    path: { v10: step === "create" ? "/v10/refunds" : "/v10/refunds/*/capture" },
    async run(env, arm, refused) {
      const c = await env.connect();
      const ref = await reserve(env.w, c, env.orderId, AMOUNT);
      await c.driver.capture(ref, AMOUNT);
      const req = {
        ref,
        refundOrderId: `${env.orderId}r`,
        amount: PART,
        idempotencyKey: `key-${env.orderId}r`,
      };
      arm();
      if (refused) {
        const err = await c.driver.refund(req).catch((e: unknown) => e);
        expect(isPaymentError(err, "conflict")).toBe(true);
        expectRefusal(env.kind, c.errors, "refund");
        expect(refunds(env)).toEqual([]);
      }
      const first = await c.driver.refund(req);
      expect(first).toMatchObject({ state: "captured" });
      // The journaled refund repeated (e.g. after a restart) is the same refund, not a second one.
      expect((await c.driver.refund(req)).refundId).toBe(first.refundId);
      expect(refunds(env)).toEqual([["refunded", PART]]);
    },
  };
}

export const legacyRefundFull: FaultOp = {
  id: "refundFull",
  label: "refund, full (engine: settlePayment of a direct payment)",
  kinds: ["legacy"],
  path: { legacy: "/API/V08/PaymentRefund" },
  async run(env, arm, refused) {
    const c = await env.connect();
    const req = settleRequest(await paid(env, c), "cancel", "refund", AMOUNT);
    arm();
    let r = await settlePayment(deps(c), req);
    if (refused) {
      expect(r.ok).toBe(false);
      expectRefusal(env.kind, c.errors, "refund");
      expect(refunds(env)).toEqual([]);
      r = await settlePayment(deps(c), req);
    }
    expect(r.ok).toBe(true);
    expect(env.w.ledger(env.orderId)).toEqual([
      ["paid", AMOUNT],
      ["refunded", AMOUNT],
    ]);
  },
};

export const legacyRefundPartial: FaultOp = {
  id: "refundPartial",
  label: "refund, partial (driver: never repeated without a key)",
  kinds: ["legacy"],
  path: { legacy: "/API/V08/PaymentRefund" },
  async run(env, arm, refused) {
    const c = await env.connect();
    const ref = await paid(env, c);
    const req = {
      ref,
      refundOrderId: `${env.orderId}r`,
      amount: PART,
      idempotencyKey: `key-${env.orderId}r`,
    };
    arm();
    const first = await c.driver.refund(req).catch((e: unknown) => e);
    if (!refused) {
      // pos-legacy §11: a lost partial refund is not repeated; the caller is told the outcome is unknown
      // (ambiguous) and reconciles, and the service holds exactly the one refund.
      expect(isPaymentError(first, "unavailable") && first.ambiguous).toBe(true);
      expect(refunds(env)).toEqual([["refunded", PART]]);
      return;
    }
    expect(isPaymentError(first, "invalid")).toBe(true);
    expectRefusal(env.kind, c.errors, "refund");
    expect(refunds(env)).toEqual([]);
    expect(await c.driver.refund(req)).toMatchObject({ state: "captured", remainder: AMOUNT - PART });
    expect(refunds(env)).toEqual([["refunded", PART]]);
  },
};
