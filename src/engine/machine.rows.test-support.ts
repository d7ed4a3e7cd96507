import { expect } from "vitest";
import {
  CANCEL_DENY,
  ctx,
  END_DENIED,
  find,
  obs,
  otherVend,
  paying,
  payingRef,
  R,
  S,
  up,
  vendRequested,
} from "./selection.test-support.js";
import { IDLE } from "./steps.js";
import type { Row } from "./table.test-support.js";
import type { EngineInput } from "./types.js";

/** The rows of the machine.test.ts transition table, as data (coverage.test.ts checks the tables are complete). */
export const rows: Row[] = [
  // ---- idle ----
  {
    name: "idle + vend request → paying, session journaled, 'connecting' (no QR), payment started, timer armed",
    from: IDLE,
    input: vendRequested(),
    to: { tag: "paying", ref: null, abandon: null },
    effects: ["openSession", "show", "startPayment", "startTimer"],
    check: (e) => {
      expect(find(e, "show")?.screen).toEqual({ kind: "connecting", amount: 150, currency: "DKK", item: 12 });
      expect(find(e, "startTimer")).toMatchObject({ timer: "payment", ms: 60_000 });
    },
  },
  {
    name: "idle + vend request at price 0 → denied at once, refused (logged at warn), nothing started",
    from: IDLE,
    input: vendRequested(0),
    to: { tag: "idle" },
    effects: ["openSession", "denyVend", "finishSession"],
    check: (e) => {
      expect(find(e, "finishSession")?.result).toBe("denied");
      expect(find(e, "denyVend")).toMatchObject({
        reason: "price must be positive",
        refused: { item: 12, price: 0 },
      });
    },
  },
  {
    name: "idle + vend request at a negative price → denied at once, refused",
    from: IDLE,
    input: vendRequested(-150),
    to: { tag: "idle" },
    effects: ["openSession", "denyVend", "finishSession"],
    check: (e) => expect(find(e, "denyVend")?.refused).toEqual({ item: 12, price: -150 }),
  },
  {
    name: "idle + vend request above engine.maxPrice → denied at once, refused, no payment started",
    from: IDLE,
    input: vendRequested(9_999_999_999_900),
    to: { tag: "idle" },
    effects: ["openSession", "denyVend", "finishSession"],
    check: (e) => {
      const reason = "price 9999999999900 above engine.maxPrice 50000 (minor units)";
      expect(find(e, "denyVend")).toMatchObject({ reason, refused: { item: 12, price: 9_999_999_999_900 } });
      expect(find(e, "finishSession")).toMatchObject({ result: "denied", reason });
    },
  },
  {
    name: "idle + vend request one minor unit above a configured maxPrice → denied at once",
    from: IDLE,
    input: vendRequested(1001),
    context: { maxPrice: 1000 },
    to: { tag: "idle" },
    effects: ["openSession", "denyVend", "finishSession"],
  },
  {
    name: "idle + vend request at exactly maxPrice → paying",
    from: IDLE,
    input: vendRequested(1000),
    context: { maxPrice: 1000 },
    to: { tag: "paying", ref: null, abandon: null },
    effects: ["openSession", "show", "startPayment", "startTimer"],
    check: (e) => expect(find(e, "startPayment")?.session.price).toBe(1000),
  },
  ...(
    [
      { type: "vendSucceeded", item: 1 },
      { type: "vendFailed" },
      { type: "vendCancelled" },
      { type: "vmcReset", reason: "x" },
      { type: "timeout", sessionId: "s1", timer: "payment" },
      { type: "paymentStarted", sessionId: "s1", ref: R },
      { type: "settled", sessionId: "s1" },
    ] satisfies EngineInput[]
  ).map(
    (input): Row => ({
      name: `idle + ${input.type} → ignored`,
      from: IDLE,
      input,
      to: { tag: "idle" },
      effects: ["ignored"],
    }),
  ),

  // ---- paying, payment not yet confirmed ----
  {
    name: "paying + payment started → watch it, and now show the QR code (the payment exists)",
    from: paying(),
    input: { type: "paymentStarted", sessionId: S.id, ref: R },
    to: { tag: "paying", ref: R },
    effects: ["watchPayment", "show"],
    check: (e) =>
      expect(find(e, "show")?.screen).toEqual({
        kind: "pay",
        amount: 150,
        currency: "DKK",
        checkinUri: ctx.checkinUri,
        item: 12,
      }),
  },
  {
    name: "paying + start refused → deny, session denied",
    from: paying(),
    input: { type: "paymentStartFailed", sessionId: S.id, reason: "busy", unresolved: false },
    to: { tag: "idle" },
    effects: [...END_DENIED],
    check: (e) => expect(find(e, "finishSession")?.result).toBe("denied"),
  },
  {
    name: "paying + start unresolved → deny, session left unsettled for recovery",
    from: paying(),
    input: { type: "paymentStartFailed", sessionId: S.id, reason: "timeout", unresolved: true },
    to: { tag: "idle" },
    effects: [...END_DENIED],
    check: (e) => expect(find(e, "finishSession")?.result).toBe("unsettled"),
  },
  {
    name: "paying (no ref) + payment timeout → deny now, cancel when the payment is known",
    from: paying(),
    input: { type: "timeout", sessionId: S.id, timer: "payment" },
    to: { tag: "paying", abandon: "customer did not pay in time" },
    effects: ["clearTimer", "denyVend", "show"],
  },
  {
    name: "paying (no ref) + VMC cancelled → abandon without deny",
    from: paying(),
    input: { type: "vendCancelled" },
    to: { tag: "paying", abandon: "the machine cancelled the vend" },
    effects: ["clearTimer"],
  },
  {
    name: "paying (no ref) + VMC reset → abandon",
    from: paying(),
    input: { type: "vmcReset", reason: "power" },
    to: { tag: "paying", abandon: "the machine reset (power)" },
    effects: ["clearTimer"],
  },
  {
    name: "paying + second vend request → denied, session unchanged",
    from: paying(),
    input: vendRequested(),
    to: { tag: "paying", abandon: null },
    effects: ["denyVend"],
    check: (e) => expect(find(e, "denyVend")?.sessionId).toBeNull(),
  },
  {
    name: "paying + input of another session → ignored",
    from: paying(),
    input: { type: "paymentStarted", sessionId: "other", ref: R },
    to: { tag: "paying", ref: null },
    effects: ["ignored"],
  },
  {
    name: "paying + vend timer → ignored",
    from: paying(),
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    to: { tag: "paying" },
    effects: ["ignored"],
  },
  {
    name: "paying + vend success (out of sequence) → ignored",
    from: paying(),
    input: { type: "vendSucceeded", item: 12 },
    to: { tag: "paying" },
    effects: ["ignored"],
  },
  {
    name: "paying (no ref) + payment update → ignored",
    from: paying(),
    input: up("reserved"),
    to: { tag: "paying" },
    effects: ["ignored"],
  },

  {
    name: "paying + a new customer's vend request (new ids) → denied, never ignored",
    from: payingRef(),
    input: otherVend,
    to: { tag: "paying", ref: R },
    effects: ["denyVend"],
  },
  // ---- paying, abandoned before the payment was confirmed ----
  {
    name: "abandoned + payment started → cancel it",
    from: paying({ abandon: "gone" }),
    input: { type: "paymentStarted", sessionId: S.id, ref: R },
    to: { tag: "settling", action: "cancel", result: "cancelled" },
    effects: ["stopWatching", "clearTimer", "settle"],
  },
  {
    name: "abandoned + start failed → finish denied without a second deny",
    from: paying({ abandon: "gone" }),
    input: { type: "paymentStartFailed", sessionId: S.id, reason: "x", unresolved: false },
    to: { tag: "idle" },
    effects: ["stopWatching", "clearTimer", "finishSession", "show"],
  },
  {
    name: "abandoned + another cancel → nothing more",
    from: paying({ abandon: "gone" }),
    input: { type: "vendCancelled" },
    to: { tag: "paying", abandon: "gone" },
    effects: [],
  },

  // ---- paying, payment known ----
  {
    name: "pending update → no change",
    from: payingRef(),
    input: up("pending"),
    to: { tag: "paying" },
    effects: [],
  },
  {
    name: "issued update → approve-in-app screen",
    from: payingRef(),
    input: up("issued"),
    to: { tag: "paying", issued: true },
    effects: ["show"],
  },
  {
    name: "issued again → no redraw",
    from: payingRef({ issued: true }),
    input: up("issued"),
    to: { tag: "paying", issued: true },
    effects: [],
  },
  {
    name: "reserved at the price → approve exactly the price, vend timer armed",
    from: payingRef(),
    input: up("reserved"),
    to: { tag: "vending" },
    effects: ["stopWatching", "clearTimer", "approveVend", "show", "startTimer"],
    check: (e) => {
      expect(find(e, "approveVend")?.amount).toBe(150);
      expect(find(e, "startTimer")).toMatchObject({ timer: "vend", ms: 30_000 });
    },
  },
  {
    name: "paid (direct payment) → approve",
    from: payingRef(),
    input: up("paid"),
    to: { tag: "vending" },
    effects: ["stopWatching", "clearTimer", "approveVend", "show", "startTimer"],
  },
  {
    name: "reserved at another amount → deny and cancel, never approve",
    from: payingRef(),
    input: up("reserved", { amount: 100 }),
    to: { tag: "settling", action: "cancel" },
    effects: [...CANCEL_DENY],
  },
  {
    name: "reserved without a stated amount → deny and cancel, never approve on trust",
    from: payingRef(),
    input: up("reserved", { amount: null }),
    to: { tag: "settling", action: "cancel" },
    effects: [...CANCEL_DENY],
  },
  {
    name: "cancelled by user → deny, session denied",
    from: payingRef(),
    input: up("cancelled", { cancelReason: "user" }),
    to: { tag: "idle" },
    effects: [...END_DENIED],
    check: (e) => expect(find(e, "finishSession")?.reason).toBe("payment cancelled by user"),
  },
  {
    name: "expired → denied",
    from: payingRef(),
    input: up("expired"),
    to: { tag: "idle" },
    effects: [...END_DENIED],
  },
  {
    name: "failed → denied",
    from: payingRef(),
    input: up("failed"),
    to: { tag: "idle" },
    effects: [...END_DENIED],
  },
  {
    name: "captured by someone else → unsettled for review",
    from: payingRef(),
    input: up("captured"),
    to: { tag: "idle" },
    effects: [...END_DENIED],
    check: (e) => expect(find(e, "finishSession")?.result).toBe("unsettled"),
  },
  {
    name: "update of another payment → ignored",
    from: payingRef(),
    input: {
      type: "paymentUpdate",
      sessionId: S.id,
      observation: { ...obs("reserved"), ref: { ...R, id: "p2" } },
    },
    to: { tag: "paying" },
    effects: ["ignored"],
  },
  {
    name: "payment timeout with a payment → deny and cancel",
    from: payingRef(),
    input: { type: "timeout", sessionId: S.id, timer: "payment" },
    to: { tag: "settling", action: "cancel" },
    effects: [...CANCEL_DENY],
  },
  {
    name: "VMC cancelled with a payment → cancel without deny",
    from: payingRef(),
    input: { type: "vendCancelled" },
    to: { tag: "settling", action: "cancel" },
    effects: ["stopWatching", "clearTimer", "settle"],
  },
  {
    name: "VMC reset with a payment → cancel",
    from: payingRef(),
    input: { type: "vmcReset", reason: "r" },
    to: { tag: "settling", action: "cancel" },
    effects: ["stopWatching", "clearTimer", "settle"],
  },
];
