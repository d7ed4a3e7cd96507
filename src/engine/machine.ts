import type { Minor } from "../core/money.js";
import type { PaymentRef } from "../payment/driver.js";
import { fromPaying } from "./paying.js";
import { fromPlanVending, planRequest } from "./plan.js";
import { fromReady, fromSession, fromSessionVending } from "./session.js";
import type {
  Effect,
  EngineContext,
  EngineInput,
  EngineState,
  Session,
  SettleAction,
  Transition,
} from "./types.js";
import { fromVending } from "./vending.js";

/**
 * The vend engine: one pure function over both flows. Selection first (MDB "always idle"): vend request →
 * payment for that price → approve → success → capture; failure → cancel; rejected or timed out → deny.
 * Check-in first: check-in → reservation of the session maximum → funds offered to the VMC → one or more
 * vends → session end → capture what was vended (partial capture) or cancel. The tables of the transitions
 * are the *.rows.test-support.ts files (coverage.test.ts checks every state × input pair has a row or is
 * explicitly ignored); the vending rules applied are vending-mdb.md §1.5 and §3.
 */
export function transition(state: EngineState, input: EngineInput, ctx: EngineContext): Transition {
  switch (state.tag) {
    case "idle":
      return fromIdle(state, input, ctx);
    case "ready":
      return fromReady(state, input, ctx);
    case "paying":
      return fromPaying(state, input, ctx);
    case "vending":
      return fromVending(state, input, ctx);
    case "planVending":
      return fromPlanVending(state, input, ctx);
    case "session":
      return fromSession(state, input, ctx);
    case "sessionVending":
      return fromSessionVending(state, input, ctx);
    case "settling":
      return fromSettling(state, input, ctx);
  }
}

export const IDLE: EngineState = { tag: "idle" };

/** Members only (issue 31): what a customer without a member's badge reads when a selection is denied. */
export const CARD_UNAVAILABLE = "Card payments are unavailable right now";
/** Members only: the idle screen. */
export const MEMBERS_ONLY_IDLE = "Card payments unavailable: members, tap your badge";

/** The state between sessions and the effects of entering it: the unit's start state too. */
export function rest(ctx: EngineContext): Transition {
  if (ctx.flow === "selection") {
    const message = ctx.membersOnly === true ? MEMBERS_ONLY_IDLE : "Choose a product";
    return { state: IDLE, effects: [{ type: "show", screen: { kind: "idle", checkinUri: null, message } }] };
  }
  if (ctx.checkinMode === "poll") {
    return {
      state: { tag: "ready", allocating: false },
      effects: [checkinScreen(ctx), { type: "watchCheckin" }],
    };
  }
  // An idle payment: its QR code is shown once the payment exists (paymentStarted), not before.
  const wait: Effect = {
    type: "show",
    screen: { kind: "idle", checkinUri: null, message: "Getting ready, one moment" },
  };
  return { state: { tag: "ready", allocating: true }, effects: [wait, { type: "allocateSession" }] };
}

/** Effects of the rest state that invite a new customer. */
export function opensSessions(e: Effect): boolean {
  return (
    e.type === "allocateSession" ||
    e.type === "watchCheckin" ||
    (e.type === "show" && e.screen.kind === "idle")
  );
}

/** Check-in first: the idle screen with the check-in QR code. */
export function checkinScreen(ctx: EngineContext): Effect {
  return {
    type: "show",
    screen: { kind: "idle", checkinUri: ctx.checkinUri, message: "Check in with the app to shop" },
  };
}

/** Ends a session: the journal result first, then the rest state's effects. */
export function finish(
  session: Session,
  result: "captured" | "cancelled" | "denied" | "unsettled",
  reason: string,
  ctx: EngineContext,
  before: Effect[] = [],
): Transition {
  const r = rest(ctx);
  return {
    state: r.state,
    effects: [...before, { type: "finishSession", session, result, reason }, ...r.effects],
  };
}

export function stay(state: EngineState, input: EngineInput, reason: string): Transition {
  return { state, effects: [{ type: "ignored", input: input.type, state: state.tag, reason }] };
}

/** A vend request that cannot be served now is denied; a second payment is never started. */
export function denyBusy(state: EngineState, reason: string): Transition {
  return { state, effects: [{ type: "denyVend", sessionId: null, reason }] };
}

export function sessionOf(input: EngineInput): string | null {
  return "sessionId" in input ? input.sessionId : null;
}

function fromIdle(state: EngineState & { tag: "idle" }, input: EngineInput, ctx: EngineContext): Transition {
  if (input.type !== "vendRequested") return stay(state, input, "no session");
  const plan = planRequest(state, input, ctx);
  if (plan !== null) return plan;
  const session: Session = {
    id: input.sessionId,
    orderId: input.orderId,
    item: input.item,
    price: input.price,
  };
  const refusal = priceRefusal(input.price, ctx.maxPrice);
  if (refusal !== null) {
    // Journaled like any denied sale, so the attempt shows in the journal; nothing reaches the service.
    return {
      state,
      effects: [
        { type: "openSession", session },
        {
          type: "denyVend",
          sessionId: session.id,
          reason: refusal,
          refused: { item: input.item, price: input.price },
        },
        { type: "finishSession", session, result: "denied", reason: refusal },
      ],
    };
  }
  if (ctx.membersOnly === true) {
    // No payment service yet (issue 31): denied at the machine, nothing journaled, nothing sent.
    return {
      state,
      effects: [
        { type: "denyVend", sessionId: null, reason: "members only: the payment service is not reachable" },
        { type: "show", screen: { kind: "idle", checkinUri: null, message: CARD_UNAVAILABLE } },
      ],
    };
  }
  return {
    state: { tag: "paying", purpose: "vend", session, ref: null, abandon: null, issued: false },
    effects: [
      { type: "openSession", session },
      // No QR code yet: it is shown once the payment exists at the service (paymentStarted).
      {
        type: "show",
        screen: { kind: "connecting", amount: session.price, currency: ctx.currency, item: session.item },
      },
      { type: "startPayment", session, purpose: "vend" },
      { type: "startTimer", sessionId: session.id, timer: "payment", ms: ctx.paymentTimeoutMs },
    ],
  };
}

/** Why a VMC price is refused in the selection flow, or null when it may be paid for. */
export function priceRefusal(price: Minor, maxPrice: Minor): string | null {
  if (!Number.isSafeInteger(price) || price <= 0) return "price must be positive";
  if (price > maxPrice) return `price ${price} above engine.maxPrice ${maxPrice} (minor units)`;
  return null;
}

type Settling = EngineState & { tag: "settling" };

function fromSettling(state: Settling, input: EngineInput, ctx: EngineContext): Transition {
  // A new vend request carries new ids: answer it before matching inputs to this session.
  if (input.type === "vendRequested") return denyBusy(state, "the last sale is still being settled");
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  switch (input.type) {
    case "settled":
      return finish(state.session, state.result, state.reason, ctx);
    case "settleFailed":
      // The decision is journaled; recovery and the sweeper settle it later, exactly once.
      return finish(state.session, "unsettled", input.reason, ctx);
    default:
      return stay(state, input, "not expected while settling");
  }
}

/**
 * Decide capture or cancel of `amount`: the settling state, the settle effect (journaled decision, then the
 * call) and the customer's screen; `before` runs first (timers, the vend outcome, the VMC).
 */
export function settleWith(
  session: Session,
  ref: PaymentRef,
  d: { action: SettleAction; amount: Minor; reason: string; review: boolean; screenReason?: string },
  ctx: EngineContext,
  before: Effect[],
): Transition {
  const { action, amount, reason, review } = d;
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
      ...before,
      { type: "settle", session, ref, action, amount, reason, review },
      {
        type: "show",
        screen:
          action === "capture"
            ? { kind: "thankYou", amount, currency: ctx.currency }
            : { kind: "cancelled", reason: d.screenReason ?? reason },
      },
    ],
  };
}
