import type { PaymentObservation, PaymentRef, PaymentState } from "../payment/driver.js";
import type { Effect, EngineContext, EngineInput, EngineState, Session } from "./types.js";

/** Fixtures of the check-in-first transition tables (session.test.ts, session-vend.test.ts). */
export const ctx: EngineContext = {
  flow: "checkin",
  checkinMode: "poll",
  sessionMax: 2000,
  maxPrice: 50_000,
  currency: "EUR",
  checkinUri: "servicepos://pos?id=100000000000001&source=qr",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
};
export const S: Session = { id: "s1", orderId: "vm-1-00001-abcd", item: 0, price: 2000 };
export const R: PaymentRef = { id: "p1", orderId: S.orderId, mode: "reservation" };
export const obs = (state: PaymentState, extra: Partial<PaymentObservation> = {}): PaymentObservation => ({
  ref: R,
  state,
  amount: 2000,
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
  purpose: "session",
  session: S,
  ref: R,
  abandon: null,
  issued: false,
  ...over,
});
export const inSession = (over: Partial<EngineState & { tag: "session" }> = {}): EngineState => ({
  tag: "session",
  session: S,
  ref: R,
  funds: 2000,
  partial: true,
  vended: 0,
  ...over,
});
export const vendingIn = (over: Partial<EngineState & { tag: "sessionVending" }> = {}): EngineState => ({
  tag: "sessionVending",
  session: S,
  ref: R,
  funds: 2000,
  partial: true,
  vended: 500,
  current: { item: 7, price: 700 },
  ...over,
});
export const vend = (price: number, sessionId = "other-ids"): EngineInput => ({
  type: "vendRequested",
  item: 7,
  price,
  sessionId,
  orderId: "unused",
});
export const settlingOf = (action: "capture" | "cancel"): EngineState => ({
  tag: "settling",
  session: S,
  ref: R,
  action,
  amount: 500,
  result: action === "capture" ? "captured" : "cancelled",
  reason: "r",
});

export const find = <T extends Effect["type"]>(effects: Effect[], type: T) =>
  effects.find((e): e is Extract<Effect, { type: T }> => e.type === type);
export const settleOf = (e: Effect[]) => find(e, "settle");
