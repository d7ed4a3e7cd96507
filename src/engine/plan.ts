import { finish, priceRefusal, sessionOf, stay } from "./steps.js";
import type { Effect, EngineContext, EngineInput, EngineState, Session, Transition } from "./types.js";

type PlanVending = EngineState & { tag: "planVending" };

/**
 * Selection first, idle: a vend request the member gate decided (issue 18). `grant`: a plan vend, approved
 * at the price without any payment request; the session (with its member) and the approval are journaled
 * in the step's one durable commit before the approval reaches the VMC (DURABILITY.md). `deny`: refused,
 * with the gate's message on the screen; nothing is journaled (nothing left the unit).
 */
export function planRequest(
  state: EngineState & { tag: "idle" },
  input: EngineInput & { type: "vendRequested" },
  ctx: EngineContext,
): Transition | null {
  const plan = input.plan;
  if (plan === undefined || ctx.flow !== "selection") return null;
  if (plan.kind === "deny") {
    return {
      state,
      effects: [
        { type: "denyVend", sessionId: null, reason: `plan: ${plan.message}` },
        { type: "show", screen: { kind: "idle", checkinUri: null, message: plan.message } },
      ],
    };
  }
  // A price out of bounds is refused as for a paid vend (the normal path journals and denies it).
  if (priceRefusal(input.price, ctx.maxPrice) !== null) return null;
  const session: Session = {
    id: input.sessionId,
    orderId: input.orderId,
    item: input.item,
    price: input.price,
  };
  const { member } = plan;
  return {
    state: { tag: "planVending", session, member },
    effects: [
      { type: "openSession", session, member },
      { type: "approveVend", session, item: input.item, amount: input.price },
      { type: "show", screen: { kind: "vending", amount: input.price, currency: ctx.currency } },
      { type: "startTimer", sessionId: session.id, timer: "vend", ms: ctx.vendTimeoutMs },
    ],
  };
}

/**
 * A plan vend is approved at the VMC: its outcome is recorded (the journal counts a delivered or unknown
 * vend against the member's allowance in the same write) and the session closes, `captured` when the
 * product was (or may have been) delivered, `cancelled` when not. No money moves either way.
 */
export function fromPlanVending(state: PlanVending, input: EngineInput, ctx: EngineContext): Transition {
  if (input.type === "vendRequested")
    return { state, effects: [{ type: "denyVend", sessionId: null, reason: "a vend is in progress" }] };
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  switch (input.type) {
    case "vendSucceeded":
      return done(state, "success", "plan vend delivered", ctx);
    case "vendFailed":
      return done(state, "failure", "plan vend failed", ctx, "The product could not be delivered");
    case "vendCancelled":
    case "approveFailed":
      return done(state, "cancelled", "the machine did not take the approval", ctx);
    case "timeout":
      if (input.timer !== "vend") return stay(state, input, "timer not armed in this state");
      return done(state, "unknown", "no vend outcome in time (counted)", ctx);
    case "vmcReset":
      // MDB §7.4.7: a reset between VEND APPROVED and VEND SUCCESS counts as VEND SUCCESS.
      return done(state, "unknown", `the machine reset during the vend (${input.reason}) (counted)`, ctx);
    default:
      return stay(state, input, "not expected during a plan vend");
  }
}

function done(
  state: PlanVending,
  outcome: "success" | "failure" | "unknown" | "cancelled",
  reason: string,
  ctx: EngineContext,
  screen?: string,
): Transition {
  const { session } = state;
  const before: Effect[] = [
    { type: "clearTimer", sessionId: session.id, timer: "vend" },
    { type: "recordVend", session, outcome },
  ];
  if (screen !== undefined) before.push({ type: "show", screen: { kind: "cancelled", reason: screen } });
  const delivered = outcome === "success" || outcome === "unknown";
  return finish(session, delivered ? "captured" : "cancelled", reason, ctx, before);
}
