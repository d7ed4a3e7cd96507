import { expect } from "vitest";
import { settlePayment, startPaymentResolved } from "../../../src/engine/payments.js";
import type { SettleAction } from "../../../src/engine/types.js";
import { isPaymentError } from "../../../src/payment/errors.js";
import { AMOUNT, deps, expectRefusal, type FaultOp, type Recorded, settleRequest } from "./fault-kit.js";
import { legacyRefundFull, legacyRefundPartial, v10RefundOp } from "./fault-ops-refund.js";
import { pollUntil, reserve, startRequest } from "./support.js";

/**
 * The rows of the fault matrix: every mutating call of each driver, each run as one intent under one armed
 * fault, resolved the way the engine resolves it (src/engine/payments.ts) or by the driver itself where the
 * driver resolves (V10 keys, pos-v10 §9; older-interface status queries, pos-legacy §11).
 */

/** Reservation start (both drivers) or the older interface's direct PaymentStart. */
function startOp(mode: "reservation" | "payment"): FaultOp {
  const reservation = mode === "reservation";
  return {
    id: reservation ? "start" : "payStart",
    label: `start${reservation ? "" : " of a direct payment"} (engine: startPaymentResolved)`,
    kinds: reservation ? ["v10", "legacy"] : ["legacy"],
    path: reservation
      ? { v10: "/v10/payments", legacy: "/API/V08/ReservationStart" }
      : { legacy: "/API/V08/PaymentStart" },
    async run(env, arm, refused) {
      const c = await env.connect();
      const req = startRequest(env.orderId, AMOUNT, { mode });
      arm();
      let r = await startPaymentResolved(deps(c), req);
      if (refused) {
        expect(r).toMatchObject({ kind: "failed", unresolved: false });
        expectRefusal(env.kind, c.errors, "start");
        expect(await c.driver.lookup(env.orderId)).toBeNull();
        expect(await c.driver.findActive()).toEqual([]);
        r = await startPaymentResolved(deps(c), req);
      }
      if (r.kind !== "started") throw new Error(`start not resolved: ${r.reason}`);
      expect(r.ref).toMatchObject({ orderId: env.orderId, mode });
      env.w.pay(c.pos);
      const target = reservation ? "reserved" : "paid";
      expect((await pollUntil(c.driver, r.ref, (o) => o.state === target)).state).toBe(target);
      if (!reservation) {
        expect(env.w.ledger(env.orderId)).toEqual([["paid", AMOUNT]]);
        return;
      }
      const settled = await settlePayment(deps(c), settleRequest(r.ref, "capture", "capture", AMOUNT));
      expect(settled.ok).toBe(true);
      expect(env.w.ledger(env.orderId)).toEqual([
        ["reserved", AMOUNT],
        ["captured", AMOUNT],
      ]);
      // No second payment left behind: V10 lists nothing active; the older PoS's current reservation is ours.
      const left = (await c.driver.findActive()).map((o) => o.ref.orderId);
      expect(left).toEqual(env.kind === "v10" ? [] : [env.orderId]);
    },
  };
}

/**
 * The older interface's PaymentCancel of a direct payment before Done (the engine's settlement of a vend
 * that never happened). No money moved, so the ledger stays empty; the payment must be gone (reads 10) and
 * the PoS free for the next start.
 */
const legacyPaymentCancel: FaultOp = {
  id: "payCancel",
  label: "cancel of a direct payment before Done (engine: settlePayment)",
  kinds: ["legacy"],
  path: { legacy: "/API/V08/PaymentCancel" },
  async run(env, arm, refused) {
    const c = await env.connect();
    const ref = await c.driver.start(startRequest(env.orderId, AMOUNT, { mode: "payment" }));
    const req = settleRequest(ref, "cancel", "refund", AMOUNT);
    arm();
    let r = await settlePayment(deps(c), req);
    if (refused) {
      expect(r.ok).toBe(false);
      expectRefusal(env.kind, c.errors, "cancel");
      expect(await c.driver.lookup(env.orderId)).toMatchObject({ state: "pending" });
      r = await settlePayment(deps(c), req);
    }
    expect(r.ok).toBe(true);
    expect(await c.driver.lookup(env.orderId)).toBeNull();
    const next = await c.driver.start(startRequest(`${env.orderId}n`, 100, { mode: "payment" }));
    expect((await c.driver.status(next)).state).toBe("pending");
    expect(env.w.ledger(env.orderId)).toEqual([]);
  },
};

function settleOp(action: SettleAction): FaultOp {
  const effect = action === "capture" ? "captured" : "cancelled";
  return {
    id: action,
    label: `${action} (engine: settlePayment)`,
    kinds: ["v10", "legacy"],
    path: {
      v10: `/v10/payments/*/${action}`,
      legacy: action === "capture" ? "/API/V08/ReservationCapture" : "/API/V08/ReservationCancel",
    },
    async run(env, arm, refused) {
      const c = await env.connect();
      const ref = await reserve(env.w, c, env.orderId, AMOUNT);
      const req = settleRequest(ref, action, action, AMOUNT);
      arm();
      let r = await settlePayment(deps(c), req);
      if (refused) {
        expect(r.ok).toBe(false);
        expectRefusal(env.kind, c.errors, action);
        expect(env.w.ledger(env.orderId)).toEqual([["reserved", AMOUNT]]);
        expect((await c.driver.status(ref)).state).toBe("reserved");
        r = await settlePayment(deps(c), req);
      }
      expect(r.ok).toBe(true);
      expect(env.w.ledger(env.orderId)).toEqual([
        ["reserved", AMOUNT],
        [effect, AMOUNT],
      ]);
    },
  };
}

const v10Open: FaultOp = {
  id: "open",
  label: "PoS creation on open (driver: one key for every retry)",
  kinds: ["v10"],
  path: { v10: "/v10/pointofsales" },
  async run(env, arm, refused) {
    const before = env.posCreates();
    arm();
    const first = await env.connect().then(
      (c) => ({ c, err: null }),
      (err: unknown) => ({ c: null, err }),
    );
    let c: Recorded;
    if (refused) {
      expect(isPaymentError(first.err, "conflict") && !first.err.ambiguous).toBe(true);
      expect(first.err).toMatchObject({ details: { status: 409 } });
      c = await env.connect(); // nothing was created, so this creates it
    } else {
      if (first.c === null) throw first.err;
      c = first.c;
    }
    const creates = env.posCreates();
    expect(creates).toBe(before + 2); // the faulted request and one more (retry, or the repeated open)
    // A restarted driver finds exactly that PoS and creates nothing.
    const again = await env.connect();
    expect(again.pos).toEqual(c.pos);
    expect(env.posCreates()).toBe(creates);
  },
};

/** Every row of the matrix, in table order. */
export const OPS: readonly FaultOp[] = [
  v10Open,
  startOp("reservation"),
  startOp("payment"),
  settleOp("capture"),
  settleOp("cancel"),
  legacyPaymentCancel,
  v10RefundOp("create"),
  v10RefundOp("capture"),
  legacyRefundFull,
  legacyRefundPartial,
];
