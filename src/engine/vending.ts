import { denyBusy, sessionOf, settleWith, stay } from "./machine.js";
import type { EngineContext, EngineInput, EngineState, SettleAction, Transition } from "./types.js";

type Vending = EngineState & { tag: "vending" };

/** Selection first: the vend is approved at the VMC; its outcome decides capture or cancel. */
export function fromVending(state: Vending, input: EngineInput, ctx: EngineContext): Transition {
  // A new vend request carries new ids: answer it before matching inputs to this session.
  if (input.type === "vendRequested") return denyBusy(state, "a vend is in progress");
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
    default:
      return stay(state, input, "not expected while vending");
  }
}

function unknownOutcome(state: Vending, why: string, ctx: EngineContext): Transition {
  const action = ctx.unknownOutcome;
  return settleVend(state, action, "unknown", `${why}; policy: ${action}`, true, ctx);
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
  const screenReason = outcome === "failure" ? "The product could not be delivered" : reason;
  return settleWith(session, ref, { action, amount: session.price, reason, review, screenReason }, ctx, [
    { type: "clearTimer", sessionId: session.id, timer: "vend" },
    { type: "recordVend", session, outcome },
  ]);
}
