import pino from "pino";
import { expect } from "vitest";
import type { FaultRule } from "../../../src/emulator/index.js";
import type { PaymentCallDeps, SettleRequest } from "../../../src/engine/payments.js";
import type { SettleAction } from "../../../src/engine/types.js";
import type { IntentOp } from "../../../src/journal/journal.js";
import type { PaymentDriver, PaymentRef } from "../../../src/payment/driver.js";
import { PaymentError } from "../../../src/payment/errors.js";
import { type Connected, type ContractWorld, type DriverKind, pollUntil, startRequest } from "./support.js";

/** The fault matrix's columns, the shape of its rows (fault-ops.ts) and what the rows share. */

/** A connected driver wrapped by `recordErrors`. */
export interface Recorded extends Connected {
  errors: RecordedError[];
}

/** One cell's surroundings. */
export interface CellEnv {
  w: ContractWorld;
  kind: DriverKind;
  orderId: string;
  /** Connects the cell's unit (a new driver each call, same configuration). */
  connect(): Promise<Recorded>;
  /** `POST /v10/pointofsales` requests the emulator received so far. */
  posCreates(): number;
}

export interface FaultOp {
  /** Short id used in order ids and test names. */
  id: string;
  label: string;
  kinds: readonly DriverKind[];
  /** The POST path the fault is armed on, per driver (emulator fault `path`). */
  path: Partial<Record<DriverKind, string>>;
  /**
   * Runs one cell: arranges, calls `arm()` right before the intent, acts and asserts. `refused` (the 409
   * column): the caller must get a typed, non-ambiguous error, nothing applied, and the same intent repeated
   * without the fault must then land exactly once.
   */
  run(env: CellEnv, arm: () => void, refused: boolean): Promise<void>;
}

/** The matrix columns. */
export type FaultName = "hang" | "500" | "reset" | "lost" | "409";

/** The emulator fault rule of each column (src/emulator/http/faults.ts); all but 409 apply the request first. */
export const FAULTS: { name: FaultName; label: string; rule: Omit<FaultRule, "path" | "method"> }[] = [
  { name: "hang", label: "hang past the client timeout", rule: { fault: "hang", applied: true } },
  { name: "500", label: "500 after apply", rule: { fault: "500", applied: true } },
  { name: "reset", label: "connection reset after apply", rule: { fault: "reset", applied: true } },
  { name: "lost", label: "lost response (applied, body cut)", rule: { fault: "lost", applied: true } },
  { name: "409", label: "409, not applied", rule: { fault: "409" } },
];

/** Payment amount of every cell, minor units. */
export const AMOUNT = 900;
/** Partial refund amount, minor units. */
export const PART = 400;
const silent = pino({ level: "silent" });

/** The engine helpers' collaborators for a cell: the cell's driver, silent logger. */
export function deps(c: Recorded): PaymentCallDeps {
  return { payment: c.driver, logger: silent, signal: new AbortController().signal };
}

/** A settlement as the engine makes it, with a journaled intent whose key derives from the order id. */
export function settleRequest(
  ref: PaymentRef,
  action: SettleAction,
  op: IntentOp,
  amount: number,
): SettleRequest {
  const intent = {
    id: 1,
    sessionId: `s-${ref.orderId}`,
    op,
    orderId: ref.orderId,
    paymentId: ref.id,
    amount,
    idempotencyKey: `key-${ref.orderId}-${op}`,
    state: "pending" as const,
    createdAt: 0,
  };
  return { ref, action, amount, intent, refundOrderId: `${ref.orderId}r` };
}

/**
 * The typed error of an injected 409: V10 maps it to `conflict` (pos-v10 §11), the older interface to
 * `invalid` (it answers refusals with 400 + StatusCode, so a 409 is an unexpected status, legacy errors.ts).
 */
export function expectRefusal(
  kind: DriverKind,
  errors: RecordedError[],
  method: RecordedError["method"],
): void {
  expect(errors).toEqual([
    { method, code: kind === "v10" ? "conflict" : "invalid", ambiguous: false, status: 409 },
  ]);
}

/** A direct payment (older interface `mode: payment`) that reached Done. */
export async function paid(env: CellEnv, c: Recorded): Promise<PaymentRef> {
  const ref = await c.driver.start(startRequest(env.orderId, AMOUNT, { mode: "payment" }));
  env.w.pay(c.pos);
  expect((await pollUntil(c.driver, ref, (o) => o.state === "paid")).state).toBe("paid");
  return ref;
}

/** The cell order's refunds in the emulator ledger. */
export const refunds = (env: CellEnv) => env.w.ledger(env.orderId).filter(([k]) => k === "refunded");

/** One failed driver call as the caller saw it. */
export interface RecordedError {
  method: keyof PaymentDriver;
  code: PaymentError["code"];
  ambiguous: boolean;
  status: number | undefined;
}

/**
 * A recording wrapper (SignalK `createMockApp` habit): delegates every call to `inner` and collects each
 * `PaymentError` the driver threw, so a test driving the engine's helpers can still assert the typed error
 * the caller was given. Other rejections pass through unrecorded.
 */
export function recordErrors(inner: PaymentDriver): { driver: PaymentDriver; errors: RecordedError[] } {
  const errors: RecordedError[] = [];
  const track = async <T>(method: keyof PaymentDriver, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (e) {
      if (e instanceof PaymentError) {
        errors.push({ method, code: e.code, ambiguous: e.ambiguous, status: e.details.status });
      }
      throw e;
    }
  };
  const driver: PaymentDriver = {
    kind: inner.kind,
    open: (signal) => track("open", () => inner.open(signal)),
    start: (req, signal) => track("start", () => inner.start(req, signal)),
    status: (ref, signal) => track("status", () => inner.status(ref, signal)),
    lookup: (orderId, signal) => track("lookup", () => inner.lookup(orderId, signal)),
    capture: (ref, amount, signal) => track("capture", () => inner.capture(ref, amount, signal)),
    cancel: (ref, signal) => track("cancel", () => inner.cancel(ref, signal)),
    refund: (req, signal) => track("refund", () => inner.refund(req, signal)),
    findActive: (signal) => track("findActive", () => inner.findActive(signal)),
    checkin: (signal) => track("checkin", () => inner.checkin(signal)),
    close: () => inner.close(),
  };
  return { driver, errors };
}
