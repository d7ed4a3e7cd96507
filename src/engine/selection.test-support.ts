import type { PaymentObservation, PaymentRef, PaymentState } from "../payment/driver.js";
import type { Effect, EngineContext, EngineInput, EngineState, Session } from "./types.js";

/** Fixtures of the selection-first transition tables (machine.test.ts, vending.test.ts). */
export const ctx: EngineContext = {
  flow: "selection",
  checkinMode: "poll",
  sessionMax: 2000,
  maxPrice: 50_000,
  currency: "DKK",
  checkinUri: "servicepos://pos?id=123456789012345&source=qr",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
};
export const S: Session = { id: "s1", orderId: "vm-1-00001-abcd", item: 12, price: 150 };
export const R: PaymentRef = { id: "p1", orderId: S.orderId, mode: "reservation" };
export const obs = (state: PaymentState, extra: Partial<PaymentObservation> = {}): PaymentObservation => ({
  ref: R,
  state,
  amount: 150,
  partialCapturePossible: state === "reserved" ? true : null,
  pollDelayMs: 1000,
  ...extra,
});
export const up = (state: PaymentState, extra: Partial<PaymentObservation> = {}): EngineInput => ({
  type: "paymentUpdate",
  sessionId: S.id,
  observation: obs(state, extra),
});

export const paying = (over: Partial<EngineState & { tag: "paying" }> = {}): EngineState => ({
  tag: "paying",
  purpose: "vend",
  session: S,
  ref: null,
  abandon: null,
  issued: false,
  ...over,
});
export const payingRef = (over: Partial<EngineState & { tag: "paying" }> = {}) => paying({ ref: R, ...over });
export const vending: EngineState = { tag: "vending", session: S, ref: R };
export const settling = (action: "capture" | "cancel"): EngineState => ({
  tag: "settling",
  session: S,
  ref: R,
  action,
  amount: 150,
  result: action === "capture" ? "captured" : "cancelled",
  reason: "r",
});

export const vendRequested = (price = 150): EngineInput => ({
  type: "vendRequested",
  item: 12,
  price,
  sessionId: S.id,
  orderId: S.orderId,
});

export const find = <T extends Effect["type"]>(effects: Effect[], type: T) =>
  effects.find((e): e is Extract<Effect, { type: T }> => e.type === type);

export const CANCEL_DENY = ["stopWatching", "clearTimer", "denyVend", "show", "settle"] as const;
export const END_DENIED = [
  "stopWatching",
  "clearTimer",
  "denyVend",
  "show",
  "finishSession",
  "show",
] as const;

/** A vend request of a new customer: new ids, as the runner allocates them for every request. */
export const otherVend: EngineInput = {
  type: "vendRequested",
  item: 3,
  price: 100,
  sessionId: "s2",
  orderId: "o2",
};
