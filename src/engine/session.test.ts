import { describe, expect, it } from "vitest";
import type { PaymentObservation, PaymentRef, PaymentState } from "../payment/driver.js";
import { rest, transition } from "./machine.js";
import type { Effect, EngineContext, EngineInput, EngineState, Session } from "./types.js";

const ctx: EngineContext = {
  flow: "checkin",
  checkinMode: "poll",
  sessionMax: 2000,
  currency: "EUR",
  checkinUri: "servicepos://pos?id=100000000000001&source=qr",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
};
const S: Session = { id: "s1", orderId: "vm-1-00001-abcd", item: 0, price: 2000 };
const R: PaymentRef = { id: "p1", orderId: S.orderId, mode: "reservation" };
const obs = (state: PaymentState, extra: Partial<PaymentObservation> = {}): PaymentObservation => ({
  ref: R,
  state,
  amount: 2000,
  partialCapturePossible: state === "reserved" ? true : null,
  pollDelayMs: 1000,
  ...extra,
});
const up = (state: PaymentState, extra: Partial<PaymentObservation> = {}): EngineInput => ({
  type: "paymentUpdate",
  sessionId: S.id,
  observation: obs(state, extra),
});
const paying = (over: Partial<EngineState & { tag: "paying" }> = {}): EngineState => ({
  tag: "paying",
  purpose: "session",
  session: S,
  ref: R,
  abandon: null,
  issued: false,
  ...over,
});
const inSession = (over: Partial<EngineState & { tag: "session" }> = {}): EngineState => ({
  tag: "session",
  session: S,
  ref: R,
  funds: 2000,
  partial: true,
  vended: 0,
  ...over,
});
const vendingIn = (over: Partial<EngineState & { tag: "sessionVending" }> = {}): EngineState => ({
  tag: "sessionVending",
  session: S,
  ref: R,
  funds: 2000,
  partial: true,
  vended: 500,
  current: { item: 7, price: 700 },
  ...over,
});
const vend = (price: number, sessionId = "other-ids"): EngineInput => ({
  type: "vendRequested",
  item: 7,
  price,
  sessionId,
  orderId: "unused",
});
const settlingOf = (action: "capture" | "cancel"): EngineState => ({
  tag: "settling",
  session: S,
  ref: R,
  action,
  amount: 500,
  result: action === "capture" ? "captured" : "cancelled",
  reason: "r",
});

interface Row {
  name: string;
  from: EngineState;
  input: EngineInput;
  to: Record<string, unknown> & { tag: EngineState["tag"] };
  effects: Effect["type"][];
  context?: Partial<EngineContext>;
  check?: (effects: Effect[]) => void;
}
const find = <T extends Effect["type"]>(effects: Effect[], type: T) =>
  effects.find((e): e is Extract<Effect, { type: T }> => e.type === type);
const settleOf = (e: Effect[]) => find(e, "settle");

const rows: Row[] = [
  // ---- ready ----
  {
    name: "ready + check-in → stop polling, allocate the session",
    from: { tag: "ready", allocating: false },
    input: { type: "checkedIn" },
    to: { tag: "ready", allocating: true },
    effects: ["stopCheckin", "allocateSession"],
  },
  {
    name: "ready (allocating) + check-in → ignored",
    from: { tag: "ready", allocating: true },
    input: { type: "checkedIn" },
    to: { tag: "ready", allocating: true },
    effects: ["ignored"],
  },
  {
    name: "ready + session allocated → reserve the session maximum",
    from: { tag: "ready", allocating: true },
    input: { type: "sessionAllocated", sessionId: S.id, orderId: S.orderId },
    to: { tag: "paying", purpose: "session", ref: null },
    effects: ["openSession", "startPayment"],
    check: (e) => {
      expect(find(e, "openSession")?.session.price).toBe(2000);
      expect(find(e, "startPayment")?.purpose).toBe("session");
    },
  },
  {
    name: "ready (not allocating) + session allocated → ignored",
    from: { tag: "ready", allocating: false },
    input: { type: "sessionAllocated", sessionId: S.id, orderId: S.orderId },
    to: { tag: "ready" },
    effects: ["ignored"],
  },
  {
    name: "ready + retry timer → allocate the next idle payment",
    from: { tag: "ready", allocating: false },
    input: { type: "timeout", sessionId: "", timer: "retry" },
    to: { tag: "ready", allocating: true },
    effects: ["allocateSession"],
  },
  {
    name: "ready + vend request without a check-in → denied",
    from: { tag: "ready", allocating: false },
    input: vend(100),
    to: { tag: "ready" },
    effects: ["denyVend"],
  },
  {
    name: "ready + vend success → ignored",
    from: { tag: "ready", allocating: false },
    input: { type: "vendSucceeded", item: 1 },
    to: { tag: "ready" },
    effects: ["ignored"],
  },

  // ---- paying for a session ----
  {
    name: "session payment issued → approve-in-app screen, customer timer starts",
    from: paying(),
    input: up("issued"),
    to: { tag: "paying", issued: true },
    effects: ["show", "startTimer"],
    check: (e) => expect(find(e, "startTimer")?.timer).toBe("payment"),
  },
  {
    name: "session payment reserved → offer the funds to the VMC",
    from: paying({ issued: true }),
    input: up("reserved"),
    to: { tag: "session", funds: 2000, partial: true, vended: 0 },
    effects: ["stopWatching", "clearTimer", "beginSession", "show", "startTimer"],
    check: (e) => {
      expect(find(e, "beginSession")?.funds).toBe(2000);
      expect(find(e, "startTimer")?.timer).toBe("session");
    },
  },
  {
    name: "reserved with partial capture not possible → session limited to the full amount",
    from: paying({ issued: true }),
    input: up("reserved", { partialCapturePossible: false }),
    to: { tag: "session", partial: false },
    effects: ["stopWatching", "clearTimer", "beginSession", "show", "startTimer"],
  },
  {
    name: "older interface (no partialCapturePossible) → partial capture allowed",
    from: paying({ issued: true }),
    input: up("reserved", { partialCapturePossible: null }),
    to: { tag: "session", partial: true },
    effects: ["stopWatching", "clearTimer", "beginSession", "show", "startTimer"],
  },
  {
    name: "session payment rejected → back to ready, polling again, nothing denied at the VMC",
    from: paying({ issued: true }),
    input: up("cancelled", { cancelReason: "user" }),
    to: { tag: "ready", allocating: false },
    effects: ["stopWatching", "clearTimer", "finishSession", "show", "watchCheckin"],
  },
  {
    name: "idle payment cancelled by the service → next idle payment at once",
    from: paying(),
    input: up("cancelled", { cancelReason: "service" }),
    context: { checkinMode: "idlePayment" },
    to: { tag: "ready", allocating: true },
    effects: ["stopWatching", "clearTimer", "finishSession", "show", "allocateSession"],
  },
  {
    name: "idle payment refused → retry after a delay",
    from: paying({ ref: null }),
    input: { type: "paymentStartFailed", sessionId: S.id, reason: "busy", unresolved: false },
    context: { checkinMode: "idlePayment" },
    to: { tag: "ready", allocating: false },
    effects: ["stopWatching", "clearTimer", "finishSession", "show", "startTimer"],
    check: (e) => expect(find(e, "startTimer")?.timer).toBe("retry"),
  },
  {
    name: "session payment + VMC cancel → ignored (no vend request in a reservation)",
    from: paying(),
    input: { type: "vendCancelled" },
    to: { tag: "paying" },
    effects: ["ignored"],
  },
  {
    name: "session payment timeout → cancel, no deny",
    from: paying({ issued: true }),
    input: { type: "timeout", sessionId: S.id, timer: "payment" },
    to: { tag: "settling", action: "cancel" },
    effects: ["stopWatching", "clearTimer", "settle"],
  },

  // ---- session ----
  {
    name: "session + vend within funds → approve exactly the price",
    from: inSession(),
    input: vend(500),
    to: { tag: "sessionVending", current: { item: 7, price: 500 } },
    effects: ["clearTimer", "approveVend", "show", "startTimer"],
    check: (e) => expect(find(e, "approveVend")).toMatchObject({ item: 7, amount: 500 }),
  },
  {
    name: "session + vend above the funds left → denied, session goes on",
    from: inSession({ vended: 1800 }),
    input: vend(500),
    to: { tag: "session", vended: 1800 },
    effects: ["denyVend"],
  },
  {
    name: "session + vend at price 0 → denied",
    from: inSession(),
    input: vend(0),
    to: { tag: "session" },
    effects: ["denyVend"],
  },
  {
    name: "no partial capture + vend of less than the reservation → deny and cancel before anything is vended",
    from: inSession({ partial: false }),
    input: vend(500),
    to: { tag: "settling", action: "cancel" },
    effects: ["denyVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "no partial capture + vend of exactly the reservation → approved",
    from: inSession({ partial: false }),
    input: vend(2000),
    to: { tag: "sessionVending" },
    effects: ["clearTimer", "approveVend", "show", "startTimer"],
  },
  {
    name: "session ended with nothing vended → cancel",
    from: inSession(),
    input: { type: "sessionEnded" },
    to: { tag: "settling", action: "cancel", result: "cancelled" },
    effects: ["clearTimer", "settle", "show"],
  },
  {
    name: "session ended after vends → capture what was vended (partial capture releases the rest)",
    from: inSession({ vended: 700 }),
    input: { type: "sessionEnded" },
    to: { tag: "settling", action: "capture", amount: 700, result: "captured" },
    effects: ["clearTimer", "settle", "show"],
    check: (e) => expect(settleOf(e)).toMatchObject({ action: "capture", amount: 700, review: false }),
  },
  {
    name: "customer idle in the session → end it at the VMC and settle",
    from: inSession({ vended: 300 }),
    input: { type: "timeout", sessionId: S.id, timer: "session" },
    to: { tag: "settling", action: "capture", amount: 300 },
    effects: ["endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "VMC reset in the session → settle what was vended",
    from: inSession({ vended: 300 }),
    input: { type: "vmcReset", reason: "x" },
    to: { tag: "settling", action: "capture", amount: 300 },
    effects: ["clearTimer", "settle", "show"],
  },
  {
    name: "session + payment update → ignored",
    from: inSession(),
    input: up("reserved"),
    to: { tag: "session" },
    effects: ["ignored"],
  },

  // ---- a vend inside the session ----
  {
    name: "vend delivered → back to the session with the funds left",
    from: vendingIn(),
    input: { type: "vendSucceeded", item: 7 },
    to: { tag: "session", vended: 1200 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
    check: (e) => expect(find(e, "show")?.screen).toMatchObject({ kind: "session", available: 800 }),
  },
  {
    name: "vend delivered that uses the funds → end the session and capture",
    from: vendingIn({ vended: 1300 }),
    input: { type: "vendSucceeded", item: 7 },
    to: { tag: "settling", action: "capture", amount: 2000 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "no partial capture: the full-amount vend delivered → capture it",
    from: vendingIn({ partial: false, vended: 0, current: { item: 1, price: 2000 } }),
    input: { type: "vendSucceeded", item: 1 },
    to: { tag: "settling", action: "capture", amount: 2000 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "vend failed → back to the session, nothing added",
    from: vendingIn(),
    input: { type: "vendFailed" },
    to: { tag: "session", vended: 500 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
    check: (e) => expect(find(e, "recordVend")?.outcome).toBe("failure"),
  },
  {
    name: "no partial capture: vend failed → end and cancel",
    from: vendingIn({ partial: false, vended: 0, current: { item: 1, price: 2000 } }),
    input: { type: "vendFailed" },
    to: { tag: "settling", action: "cancel" },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "vend cancelled by the VMC → back to the session",
    from: vendingIn(),
    input: { type: "vendCancelled" },
    to: { tag: "session", vended: 500 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
  },
  {
    name: "approval refused by the VMC → back to the session",
    from: vendingIn(),
    input: { type: "approveFailed", sessionId: S.id, reason: "state" },
    to: { tag: "session", vended: 500 },
    effects: ["clearTimer", "recordVend", "show", "startTimer"],
  },
  {
    name: "no vend outcome in time, policy capture → counted, captured, flagged",
    from: vendingIn(),
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    to: { tag: "settling", action: "capture", amount: 1200 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
    check: (e) => expect(settleOf(e)?.review).toBe(true),
  },
  {
    name: "no vend outcome in time, policy cancel → only earlier vends captured, flagged",
    from: vendingIn(),
    input: { type: "timeout", sessionId: S.id, timer: "vend" },
    context: { unknownOutcome: "cancel" },
    to: { tag: "settling", action: "capture", amount: 500 },
    effects: ["clearTimer", "recordVend", "endSession", "clearTimer", "settle", "show"],
  },
  {
    name: "VMC reset during a session vend → counts as delivered (MDB §7.4.7)",
    from: vendingIn(),
    input: { type: "vmcReset", reason: "power" },
    to: { tag: "settling", action: "capture", amount: 1200 },
    effects: ["clearTimer", "recordVend", "clearTimer", "settle", "show"],
  },
  {
    name: "VMC ended the session during the vend → unknown outcome, policy",
    from: vendingIn(),
    input: { type: "sessionEnded" },
    to: { tag: "settling", action: "capture", amount: 1200 },
    effects: ["clearTimer", "recordVend", "clearTimer", "settle", "show"],
  },
  {
    name: "vend request during a vend → denied",
    from: vendingIn(),
    input: vend(100),
    to: { tag: "sessionVending" },
    effects: ["denyVend"],
  },
  {
    name: "session timer during a vend → ignored",
    from: vendingIn(),
    input: { type: "timeout", sessionId: S.id, timer: "session" },
    to: { tag: "sessionVending" },
    effects: ["ignored"],
  },

  // ---- settling back to ready ----
  {
    name: "settled → ready, QR shown, polling again",
    from: settlingOf("capture"),
    input: { type: "settled", sessionId: S.id },
    to: { tag: "ready", allocating: false },
    effects: ["finishSession", "show", "watchCheckin"],
  },
  {
    name: "settled (idle payment mode) → next idle payment",
    from: settlingOf("cancel"),
    input: { type: "settled", sessionId: S.id },
    context: { checkinMode: "idlePayment" },
    to: { tag: "ready", allocating: true },
    effects: ["finishSession", "show", "allocateSession"],
  },
];

describe("engine transitions (check-in first, multi-vend)", () => {
  it.each(rows)("$name", (row) => {
    const { state, effects } = transition(row.from, row.input, { ...ctx, ...row.context });
    expect(state).toMatchObject(row.to);
    expect(effects.map((e) => e.type)).toEqual(row.effects);
    row.check?.(effects);
  });

  it("starts in the right rest state for each flow and mode", () => {
    expect(rest(ctx)).toMatchObject({ state: { tag: "ready", allocating: false } });
    expect(rest(ctx).effects.map((e) => e.type)).toEqual(["show", "watchCheckin"]);
    expect(rest({ ...ctx, checkinMode: "idlePayment" }).effects.map((e) => e.type)).toEqual([
      "show",
      "allocateSession",
    ]);
    expect(rest({ ...ctx, flow: "selection" })).toMatchObject({ state: { tag: "idle" } });
  });

  it("never approves more than the funds left, whatever the prices", () => {
    for (const vended of [0, 500, 1999]) {
      for (const price of [1, 500, 1500, 2000, 2001]) {
        const { effects } = transition(inSession({ vended }), vend(price), ctx);
        const approve = find(effects, "approveVend");
        if (approve) expect(approve.amount).toBeLessThanOrEqual(2000 - vended);
      }
    }
  });
});
