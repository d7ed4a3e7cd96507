import { decideSettlement, settleActionOf } from "./settlement.js";
import { denyBusy, sessionOf, settleWith, stay } from "./steps.js";
import type { EngineContext, EngineInput, EngineState, Transition } from "./types.js";

type Vending = EngineState & { tag: "vending" };

/** Selection first: the vend is approved at the VMC; its outcome decides capture or cancel. */
export function fromVending(state: Vending, input: EngineInput, ctx: EngineContext): Transition {
  // A new vend request carries new ids: answer it before matching inputs to this session.
  if (input.type === "vendRequested") return denyBusy(state, "a vend is in progress");
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  switch (input.type) {
    case "vendSucceeded":
      return settleVend(state, "success", "vend delivered", ctx);
    case "vendFailed":
      // vending-mdb §1.5 rule 2: VEND FAILURE refunds the customer.
      return settleVend(state, "failure", "vend failed", ctx);
    case "vendCancelled":
    case "approveFailed":
      // The VMC left before it took the approval (VEND CANCEL is valid only before approval, MDB §7.3).
      return settleVend(state, "cancelled", "the machine did not take the approval", ctx);
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
  return settleVend(state, "unknown", why, ctx);
}

/** Settles the session's one vend by the money policy (`decideSettlement`): one vend at the session's price. */
function settleVend(
  state: Vending,
  outcome: "success" | "failure" | "unknown" | "cancelled",
  why: string,
  ctx: EngineContext,
): Transition {
  const { session, ref } = state;
  const d = decideSettlement({
    price: session.price,
    vends: [{ amount: session.price, outcome }],
    mode: ref.mode,
    policy: ctx.unknownOutcome,
    why,
  });
  const { amount, reason, review } = d;
  const screenReason = outcome === "failure" ? "The product could not be delivered" : reason;
  const settle = { action: settleActionOf(d), amount, reason, review, screenReason };
  return settleWith(session, ref, settle, ctx, [
    { type: "clearTimer", sessionId: session.id, timer: "vend" },
    { type: "recordVend", session, outcome },
  ]);
}
