import type { Minor } from "../core/money.js";
import { decideSettlement, settleActionOf, type VendFact } from "./settlement.js";
import { denyBusy, sessionOf, settleWith, stay } from "./steps.js";
import type { Effect, EngineContext, EngineInput, EngineState, Session, Transition } from "./types.js";

type Ready = EngineState & { tag: "ready" };
type InSession = EngineState & { tag: "session" };
type SessionVending = EngineState & { tag: "sessionVending" };

/** Check-in first, between sessions: the QR code is shown and the unit waits for a customer. */
export function fromReady(state: Ready, input: EngineInput, ctx: EngineContext): Transition {
  switch (input.type) {
    case "checkedIn":
      if (state.allocating) return stay(state, input, "a session is being opened");
      return {
        state: { tag: "ready", allocating: true },
        effects: [{ type: "stopCheckin" }, { type: "allocateSession" }],
      };
    case "timeout":
      if (input.timer !== "retry" || state.allocating)
        return stay(state, input, "timer not armed in this state");
      return { state: { tag: "ready", allocating: true }, effects: [{ type: "allocateSession" }] };
    case "sessionAllocated": {
      if (!state.allocating) return stay(state, input, "no session was asked for");
      const session: Session = {
        id: input.sessionId,
        orderId: input.orderId,
        item: 0,
        price: ctx.sessionMax,
      };
      return {
        state: { tag: "paying", purpose: "session", session, ref: null, abandon: null, issued: false },
        effects: [
          { type: "openSession", session },
          { type: "startPayment", session, purpose: "session" },
        ],
      };
    }
    case "vendRequested":
      return denyBusy(state, "check in with the app first");
    default:
      return stay(state, input, "no session");
  }
}

/** Funds are reserved and offered to the VMC; the customer chooses products within them. */
export function fromSession(state: InSession, input: EngineInput, ctx: EngineContext): Transition {
  const sid = sessionOf(input);
  if (sid !== null && input.type !== "vendRequested" && sid !== state.session.id) {
    return stay(state, input, "input of another session");
  }
  switch (input.type) {
    case "vendRequested": {
      const { item, price } = input;
      if (!Number.isSafeInteger(price) || price <= 0) return denyBusy(state, "price must be positive");
      if (!state.partial && price !== state.funds) {
        // Partial capture is not possible on this payment: only a vend of the full reserved amount may
        // proceed; otherwise the payment is cancelled before anything is vended (vending-mdb §3).
        return endAndSettle(state, state.vended, "partial capture not possible for this payment", ctx, [
          {
            type: "denyVend",
            sessionId: state.session.id,
            reason: "only the full reserved amount can be vended",
          },
        ]);
      }
      if (price > state.funds - state.vended) return denyBusy(state, "not enough funds left in the session");
      return {
        state: { ...state, tag: "sessionVending", current: { item, price } },
        effects: [
          { type: "clearTimer", sessionId: state.session.id, timer: "session" },
          { type: "approveVend", session: state.session, item, amount: price },
          { type: "show", screen: { kind: "vending", amount: price, currency: ctx.currency } },
          { type: "startTimer", sessionId: state.session.id, timer: "vend", ms: ctx.vendTimeoutMs },
        ],
      };
    }
    case "sessionEnded":
      return settleSession(state, state.vended, "the machine ended the session", ctx, []);
    case "timeout":
      if (input.timer !== "session") return stay(state, input, "timer not armed in this state");
      return endAndSettle(state, state.vended, "the customer chose nothing in time", ctx, []);
    case "vmcReset":
      return settleSession(state, state.vended, `the machine reset (${input.reason})`, ctx, []);
    default:
      return stay(state, input, "not expected in a session");
  }
}

/** A vend inside a check-in session is approved at the VMC. */
export function fromSessionVending(
  state: SessionVending,
  input: EngineInput,
  ctx: EngineContext,
): Transition {
  const sid = sessionOf(input);
  if (sid !== null && input.type !== "vendRequested" && sid !== state.session.id) {
    return stay(state, input, "input of another session");
  }
  const { current } = state;
  const clear: Effect = { type: "clearTimer", sessionId: state.session.id, timer: "vend" };
  switch (input.type) {
    case "vendSucceeded": {
      const vended = state.vended + current.price;
      const record: Effect[] = [clear, { type: "recordVend", session: state.session, outcome: "success" }];
      if (!state.partial || vended >= state.funds) {
        return endAndSettle(state, vended, "the session's funds are used", ctx, record);
      }
      return backToSession(state, vended, ctx, record);
    }
    case "vendFailed":
    case "vendCancelled": {
      const outcome = input.type === "vendFailed" ? "failure" : "cancelled";
      const record: Effect[] = [clear, { type: "recordVend", session: state.session, outcome }];
      if (!state.partial) return endAndSettle(state, state.vended, `vend ${outcome}`, ctx, record);
      return backToSession(state, state.vended, ctx, record);
    }
    case "approveFailed": {
      const record: Effect[] = [clear, { type: "recordVend", session: state.session, outcome: "cancelled" }];
      return backToSession(state, state.vended, ctx, record);
    }
    case "timeout":
      if (input.timer !== "vend") return stay(state, input, "timer not armed in this state");
      return unknownVend(state, "no vend outcome in time", true, ctx);
    case "vmcReset":
      // MDB §7.4.7: a reset between VEND APPROVED and VEND SUCCESS counts as VEND SUCCESS.
      return unknownVend(state, `the machine reset during the vend (${input.reason})`, false, ctx);
    case "sessionEnded":
      return unknownVend(state, "the machine ended the session during the vend", false, ctx);
    case "vendRequested":
      return denyBusy(state, "a vend is in progress");
    default:
      return stay(state, input, "not expected while vending");
  }
}

function backToSession(
  state: SessionVending,
  vended: Minor,
  ctx: EngineContext,
  before: Effect[],
): Transition {
  const { current: _done, ...rest } = state;
  return {
    state: { ...rest, tag: "session", vended },
    effects: [
      ...before,
      { type: "show", screen: { kind: "session", available: state.funds - vended, currency: ctx.currency } },
      { type: "startTimer", sessionId: state.session.id, timer: "session", ms: ctx.paymentTimeoutMs },
    ],
  };
}

function unknownVend(state: SessionVending, why: string, endAtVmc: boolean, ctx: EngineContext): Transition {
  const before: Effect[] = [
    { type: "clearTimer", sessionId: state.session.id, timer: "vend" },
    { type: "recordVend", session: state.session, outcome: "unknown" },
  ];
  const vends = [{ amount: state.current.price, outcome: "unknown" as const }];
  return endAtVmc
    ? endAndSettle(state, state.vended, why, ctx, before, vends)
    : settleSession(state, state.vended, why, ctx, before, vends);
}

/** Tells the VMC the session is over, then settles it. */
function endAndSettle(
  state: InSession | SessionVending,
  vended: Minor,
  why: string,
  ctx: EngineContext,
  before: Effect[],
  open: readonly VendFact[] = [],
): Transition {
  const end: Effect = { type: "endSession", session: state.session };
  return settleSession(state, vended, why, ctx, [...before, end], open);
}

/**
 * Settles the session by the money policy (`decideSettlement`): the delivered total so far plus `open`, the
 * vend whose outcome is unknown (if any). A capture takes what was vended (and releases the rest); with
 * nothing to charge the session's funds are released.
 */
function settleSession(
  state: InSession | SessionVending,
  vended: Minor,
  why: string,
  ctx: EngineContext,
  before: Effect[],
  open: readonly VendFact[] = [],
): Transition {
  const delivered: VendFact[] = vended > 0 ? [{ amount: vended, outcome: "success" }] : [];
  const d = decideSettlement({
    price: state.funds,
    vends: [...delivered, ...open],
    mode: state.ref.mode,
    policy: ctx.unknownOutcome,
    why,
  });
  const settle = { action: settleActionOf(d), amount: d.amount, reason: d.reason, review: d.review };
  return settleWith(state.session, state.ref, settle, ctx, [
    ...before,
    { type: "clearTimer", sessionId: state.session.id, timer: "session" },
  ]);
}
