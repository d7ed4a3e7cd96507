import type { FaultRule } from "../../../src/emulator/index.js";
import { settlePayment, startPaymentResolved } from "../../../src/engine/payments.js";
import type { SettleAction } from "../../../src/engine/types.js";
import type { BudgetOperation } from "../../../src/payment/budget.js";
import type { PaymentRef } from "../../../src/payment/driver.js";
import type { CellUnit } from "./budget-kit.js";
import { settleRequest } from "./fault-kit.js";
import { type DriverKind, startRequest } from "./support.js";

/**
 * The rows of the retry-budget test: every mutating call of each driver, as one logical call the way its
 * caller makes it (the engine's helpers for start and settlements, the driver for refunds and open), with
 * the POST paths of its mutation (where the emulator's faults are armed) and its row in budget.ts.
 */
export interface BudgetOp {
  id: string;
  kind: DriverKind;
  budget: BudgetOperation;
  /** Operations the call also makes (V10 open fetches the first token). */
  plus?: readonly BudgetOperation[];
  /** Emulator fault paths of the mutation (POST). */
  paths: readonly string[];
  /**
   * A mixed schedule that drives the call down its longest path, where the uniform ones cannot (each
   * layer's attempts used up before the next layer acts), so that one more attempt anywhere shows.
   */
  deepest?: readonly FaultRule[];
  /** Sets the cell up with the faults off; returns the measured call. */
  prepare(u: CellUnit): Promise<() => Promise<unknown>>;
}

const AMOUNT = 700;
const PART = 300;

const ALWAYS = 1000;

function startOp(kind: DriverKind, mode: "reservation" | "payment"): BudgetOp {
  const op = mode === "reservation" ? "ReservationStart" : "PaymentStart";
  return {
    id: mode === "reservation" ? "start" : "payStart",
    kind,
    budget: "start",
    paths: kind === "v10" ? ["/v10/payments"] : [`/API/V08/${op}`],
    // V10: every initiate fails after applying; the lookup's list and read each answer on the last attempt.
    ...(kind === "v10"
      ? {
          deepest: [
            { method: "POST", path: "/v10/payments", fault: "500", count: 3 },
            { method: "GET", path: "/v10/payments", fault: "500", count: 2 },
            { method: "GET", path: "/v10/payments/*", fault: "500", count: 2 },
          ],
        }
      : {}),
    async prepare(u) {
      await u.open();
      return () => startPaymentResolved(u.deps, startRequest(u.orderId, AMOUNT, { mode }));
    },
  };
}

function settleOp(kind: DriverKind, action: SettleAction): BudgetOp {
  const legacyOp = action === "capture" ? "ReservationCapture" : "ReservationCancel";
  const v10Path = `/v10/payments/*/${action}`;
  return {
    id: action,
    kind,
    budget: action,
    paths: kind === "v10" ? [v10Path] : [`/API/V08/${legacyOp}`],
    // V10: two 500s (not applied), then the 409 the driver resolves by reading the payment; every read
    // fails, so the engine's status query runs too: 3 POSTs + 3 driver reads + 3 engine reads.
    ...(kind === "v10"
      ? {
          deepest: [
            { method: "POST", path: v10Path, fault: "500", applied: false, count: 2 },
            {
              method: "POST",
              path: v10Path,
              fault: "409",
              code: action === "capture" ? "1304" : "1300",
              count: 1,
            },
            { method: "GET", path: "/v10/payments/*", fault: "500", count: ALWAYS },
          ],
        }
      : {}),
    async prepare(u) {
      const ref = await u.paid("reservation", AMOUNT);
      return () => settlePayment(u.deps, settleRequest(ref, action, action, AMOUNT));
    },
  };
}

/**
 * The refund the way its caller makes it: the V10 driver's flow R1 (faults on its create, or on the
 * refund's capture after a clean create); the older interface's partial refund.
 */
function driverRefundOp(kind: DriverKind, step: "create" | "capture" = "create"): BudgetOp {
  const v10Path = step === "create" ? "/v10/refunds" : "/v10/refunds/*/capture";
  return {
    id: kind === "v10" ? (step === "create" ? "refund" : "refund capture") : "partialRefund",
    kind,
    budget: kind === "v10" ? "refund" : "partialRefund",
    paths: kind === "v10" ? [v10Path] : ["/API/V08/PaymentRefund"],
    async prepare(u) {
      let ref: PaymentRef;
      if (kind === "v10") {
        ref = await u.paid("reservation", AMOUNT);
        await u.driver.capture(ref, AMOUNT);
      } else {
        ref = await u.paid("payment", AMOUNT);
      }
      const req = { ref, refundOrderId: `${u.orderId}r`, amount: PART, idempotencyKey: `key-${u.orderId}r` };
      return () => u.driver.refund(req);
    },
  };
}

/** The older interface's direct payment, settled by the engine: cancel before Done, full refund after. */
function directOp(id: "payCancel" | "refund"): BudgetOp {
  return {
    id,
    kind: "legacy",
    budget: id,
    paths: [id === "payCancel" ? "/API/V08/PaymentCancel" : "/API/V08/PaymentRefund"],
    async prepare(u) {
      let ref: PaymentRef;
      if (id === "refund") {
        ref = await u.paid("payment", AMOUNT);
      } else {
        await u.open();
        ref = await u.driver.start(startRequest(u.orderId, AMOUNT, { mode: "payment" }));
      }
      return () => settlePayment(u.deps, settleRequest(ref, "cancel", "refund", AMOUNT));
    },
  };
}

function openOp(kind: DriverKind): BudgetOp {
  return {
    id: "open",
    kind,
    budget: "open",
    ...(kind === "v10" ? { plus: ["token"] as const } : {}),
    paths: kind === "v10" ? ["/v10/pointofsales"] : ["/API/V08/RegisterPoS"],
    async prepare(u) {
      return () => u.open();
    },
  };
}

/** Every mutating call of each driver. */
export const BUDGET_OPS: readonly BudgetOp[] = [
  openOp("v10"),
  startOp("v10", "reservation"),
  settleOp("v10", "capture"),
  settleOp("v10", "cancel"),
  driverRefundOp("v10"),
  driverRefundOp("v10", "capture"),
  openOp("legacy"),
  startOp("legacy", "reservation"),
  startOp("legacy", "payment"),
  settleOp("legacy", "capture"),
  settleOp("legacy", "cancel"),
  directOp("payCancel"),
  directOp("refund"),
  driverRefundOp("legacy"),
];
