import type { Minor } from "../core/money.js";
import type { PaymentRef } from "../payment/driver.js";
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
 * The helpers every state's transitions are built with (machine.ts dispatches to the states' files, which
 * all use these): the rest state, ending a session, staying put, denying, settling.
 */
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

/** Why a VMC price is refused in the selection flow, or null when it may be paid for. */
export function priceRefusal(price: Minor, maxPrice: Minor): string | null {
  if (!Number.isSafeInteger(price) || price <= 0) return "price must be positive";
  if (price > maxPrice) return `price ${price} above engine.maxPrice ${maxPrice} (minor units)`;
  return null;
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
