import type { PaymentObservation } from "../payment/driver.js";
import type {
  Effect,
  EngineContext,
  EngineInput,
  EngineState,
  Session,
  SettleAction,
  Transition,
} from "./types.js";

/**
 * The selection-first vend flow (MDB "always idle"): vend request → payment for that price → approve →
 * success → capture; failure → cancel; rejected or timed out → deny. The table of every transition is in
 * machine.test.ts. The vending rules applied here are in vending-mdb.md §1.5 and §3.
 */
export function transition(state: EngineState, input: EngineInput, ctx: EngineContext): Transition {
  switch (state.tag) {
    case "idle":
      return fromIdle(state, input, ctx);
    case "paying":
      return fromPaying(state, input, ctx);
    case "vending":
      return fromVending(state, input, ctx);
    case "settling":
      return fromSettling(state, input);
  }
}

export const IDLE: EngineState = { tag: "idle" };

function stay(state: EngineState, input: EngineInput, reason: string): Transition {
  return { state, effects: [{ type: "ignored", input: input.type, state: state.tag, reason }] };
}

function idleScreen(): Effect {
  return { type: "show", screen: { kind: "idle", checkinUri: null, message: "Choose a product" } };
}

/** A vend request while a session is running is out of sequence: deny it, never start a second payment. */
function denyBusy(state: EngineState, reason: string): Transition {
  return { state, effects: [{ type: "denyVend", sessionId: null, reason }] };
}

function fromIdle(state: EngineState & { tag: "idle" }, input: EngineInput, ctx: EngineContext): Transition {
  if (input.type !== "vendRequested") return stay(state, input, "no session");
  const session: Session = {
    id: input.sessionId,
    orderId: input.orderId,
    item: input.item,
    price: input.price,
  };
  if (!Number.isSafeInteger(input.price) || input.price <= 0) {
    const reason = "price must be positive";
    return {
      state,
      effects: [
        { type: "openSession", session },
        { type: "denyVend", sessionId: session.id, reason },
        { type: "finishSession", session, result: "denied", reason },
      ],
    };
  }
  return {
    state: { tag: "paying", session, ref: null, abandon: null, issued: false },
    effects: [
      { type: "openSession", session },
      {
        type: "show",
        screen: {
          kind: "pay",
          amount: session.price,
          currency: ctx.currency,
          checkinUri: ctx.checkinUri,
          item: session.item,
        },
      },
      { type: "startPayment", session },
      { type: "startTimer", sessionId: session.id, timer: "payment", ms: ctx.paymentTimeoutMs },
    ],
  };
}

type Paying = EngineState & { tag: "paying" };

function sessionOf(input: EngineInput): string | null {
  return "sessionId" in input ? input.sessionId : null;
}

function fromPaying(state: Paying, input: EngineInput, ctx: EngineContext): Transition {
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  const { session } = state;
  switch (input.type) {
    case "paymentStarted":
      if (state.abandon !== null) return cancelPayment({ ...state, ref: input.ref }, state.abandon, false);
      return {
        state: { ...state, ref: input.ref },
        effects: [{ type: "watchPayment", session, ref: input.ref }],
      };
    case "paymentStartFailed":
      return endUnpaid(state, input.reason, input.unresolved ? "unsettled" : "denied");
    case "paymentUpdate":
      if (state.ref === null || input.observation.ref.id !== state.ref.id) {
        return stay(state, input, "update of another payment");
      }
      return onPaymentUpdate(state, input.observation, ctx);
    case "timeout":
      if (input.timer !== "payment") return stay(state, input, "timer not armed in this state");
      return abandon(state, "customer did not pay in time", true);
    case "vendCancelled":
      return abandon(state, "the machine cancelled the vend", false);
    case "vmcReset":
      return abandon(state, `the machine reset (${input.reason})`, false);
    case "vendRequested":
      return denyBusy(state, "a payment is already running");
    default:
      return stay(state, input, "not expected while paying");
  }
}

function onPaymentUpdate(state: Paying, obs: PaymentObservation, ctx: EngineContext): Transition {
  const { session } = state;
  const ref = state.ref ?? obs.ref;
  switch (obs.state) {
    case "pending":
      return { state, effects: [] };
    case "issued":
      if (state.issued || state.abandon !== null) return { state, effects: [] };
      return {
        state: { ...state, issued: true },
        effects: [
          { type: "show", screen: { kind: "approveInApp", amount: session.price, currency: ctx.currency } },
        ],
      };
    case "reserved":
    case "paid": {
      if (state.abandon !== null) return cancelPayment({ ...state, ref }, state.abandon, false);
      if (obs.amount !== null && obs.amount !== session.price) {
        // vending-mdb §1.5 rule 5: never approve an amount other than the requested one.
        return cancelPayment({ ...state, ref }, "the reserved amount differs from the price", true);
      }
      return {
        state: { tag: "vending", session, ref },
        effects: [
          { type: "stopWatching", sessionId: session.id },
          { type: "clearTimer", sessionId: session.id, timer: "payment" },
          { type: "approveVend", session, amount: session.price },
          { type: "show", screen: { kind: "vending", amount: session.price, currency: ctx.currency } },
          { type: "startTimer", sessionId: session.id, timer: "vend", ms: ctx.vendTimeoutMs },
        ],
      };
    }
    case "cancelled":
    case "expired":
    case "failed": {
      const why =
        obs.state === "cancelled"
          ? `payment cancelled by ${obs.cancelReason ?? "the service"}`
          : `payment ${obs.state}`;
      return endUnpaid(state, state.abandon ?? why, "denied");
    }
    case "captured":
      // Only this unit captures; a capture it did not make needs a person to look at it.
      return endUnpaid(state, "payment captured before the vend was approved", "unsettled");
  }
}

/** The payment ended (or never started) without funds to settle: deny if the VMC still waits. */
function endUnpaid(state: Paying, reason: string, result: "denied" | "unsettled"): Transition {
  const { session } = state;
  const effects: Effect[] = [
    { type: "stopWatching", sessionId: session.id },
    { type: "clearTimer", sessionId: session.id, timer: "payment" },
  ];
  if (state.abandon === null) {
    effects.push({ type: "denyVend", sessionId: session.id, reason });
    effects.push({ type: "show", screen: { kind: "cancelled", reason } });
  }
  effects.push({ type: "finishSession", session, result, reason }, idleScreen());
  return { state: IDLE, effects };
}

/** The vend cannot happen any more; cancel the payment now or as soon as it exists. */
function abandon(state: Paying, reason: string, denyAtVmc: boolean): Transition {
  if (state.abandon !== null) return { state, effects: [] };
  if (state.ref !== null) return cancelPayment(state, reason, denyAtVmc);
  const effects: Effect[] = [{ type: "clearTimer", sessionId: state.session.id, timer: "payment" }];
  if (denyAtVmc) {
    effects.push({ type: "denyVend", sessionId: state.session.id, reason });
    effects.push({ type: "show", screen: { kind: "cancelled", reason } });
  }
  return { state: { ...state, abandon: reason }, effects };
}

function cancelPayment(state: Paying, reason: string, denyAtVmc: boolean): Transition {
  const { session } = state;
  const ref = state.ref;
  if (ref === null) return abandon(state, reason, denyAtVmc);
  const effects: Effect[] = [
    { type: "stopWatching", sessionId: session.id },
    { type: "clearTimer", sessionId: session.id, timer: "payment" },
  ];
  if (denyAtVmc && state.abandon === null) {
    effects.push({ type: "denyVend", sessionId: session.id, reason });
    effects.push({ type: "show", screen: { kind: "cancelled", reason } });
  }
  effects.push({
    type: "settle",
    session,
    ref,
    action: "cancel",
    amount: session.price,
    reason,
    review: false,
  });
  return {
    state: {
      tag: "settling",
      session,
      ref,
      action: "cancel",
      amount: session.price,
      result: "cancelled",
      reason,
    },
    effects,
  };
}

type Vending = EngineState & { tag: "vending" };

function fromVending(state: Vending, input: EngineInput, ctx: EngineContext): Transition {
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  switch (input.type) {
    case "vendSucceeded":
      return settleVend(state, "capture", "success", "vend delivered", false, ctx);
    case "vendFailed":
      // vending-mdb §1.5 rule 2: VEND FAILURE refunds the customer.
      return settleVend(state, "cancel", "failure", "vend failed", false, ctx);
    case "vendCancelled":
    case "approveFailed":
      // The VMC left before it took the approval (VEND CANCEL is valid only before approval, MDB §7.3).
      return settleVend(state, "cancel", "cancelled", "the machine did not take the approval", false, ctx);
    case "timeout":
      if (input.timer !== "vend") return stay(state, input, "timer not armed in this state");
      return unknownOutcome(state, "no vend outcome in time", ctx);
    case "vmcReset":
      // MDB §7.4.7: a reset between VEND APPROVED and VEND SUCCESS counts as VEND SUCCESS.
      return unknownOutcome(state, `the machine reset during the vend (${input.reason})`, ctx);
    case "vendRequested":
      return denyBusy(state, "a vend is in progress");
    default:
      return stay(state, input, "not expected while vending");
  }
}

function unknownOutcome(state: Vending, why: string, ctx: EngineContext): Transition {
  const action = ctx.unknownOutcome;
  const reason = `${why}; policy: ${action}`;
  return settleVend(state, action, "unknown", reason, true, ctx);
}

function settleVend(
  state: Vending,
  action: SettleAction,
  outcome: "success" | "failure" | "unknown" | "cancelled",
  reason: string,
  review: boolean,
  ctx: EngineContext,
): Transition {
  const { session, ref } = state;
  const amount = session.price;
  return {
    state: {
      tag: "settling",
      session,
      ref,
      action,
      amount,
      result: action === "capture" ? "captured" : "cancelled",
      reason,
    },
    effects: [
      { type: "clearTimer", sessionId: session.id, timer: "vend" },
      { type: "recordVend", session, outcome },
      { type: "settle", session, ref, action, amount, reason, review },
      {
        type: "show",
        screen:
          action === "capture"
            ? { kind: "thankYou", amount, currency: ctx.currency }
            : {
                kind: "cancelled",
                reason: outcome === "failure" ? "The product could not be delivered" : reason,
              },
      },
    ],
  };
}

type Settling = EngineState & { tag: "settling" };

function fromSettling(state: Settling, input: EngineInput): Transition {
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  switch (input.type) {
    case "settled":
      return {
        state: IDLE,
        effects: [
          { type: "finishSession", session: state.session, result: state.result, reason: state.reason },
          idleScreen(),
        ],
      };
    case "settleFailed":
      // The decision is journaled; recovery and the sweeper settle it later, exactly once.
      return {
        state: IDLE,
        effects: [
          { type: "finishSession", session: state.session, result: "unsettled", reason: input.reason },
          idleScreen(),
        ],
      };
    case "vendRequested":
      return denyBusy(state, "the last sale is still being settled");
    default:
      return stay(state, input, "not expected while settling");
  }
}
