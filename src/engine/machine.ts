import { fromPaying } from "./paying.js";
import { fromPlanVending, planRequest } from "./plan.js";
import { fromReady, fromSession, fromSessionVending } from "./session.js";
import { CARD_UNAVAILABLE, denyBusy, finish, priceRefusal, sessionOf, stay } from "./steps.js";
import type { EngineContext, EngineInput, EngineState, Session, Transition } from "./types.js";
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
