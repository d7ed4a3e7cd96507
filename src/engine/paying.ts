import type { PaymentObservation } from "../payment/driver.js";
import { checkinScreen, denyBusy, finish, sessionOf, stay } from "./steps.js";
import type { Effect, EngineContext, EngineInput, EngineState, Transition } from "./types.js";

type Paying = EngineState & { tag: "paying" };

/**
 * The payment phase, shared by both flows. `purpose: "vend"`: a VMC vend request waits, so a payment that
 * fails is answered with a deny. `purpose: "session"`: a check-in session's reservation; nothing waits at
 * the VMC, and the customer's timer starts only once the payment is in their app.
 */
export function fromPaying(state: Paying, input: EngineInput, ctx: EngineContext): Transition {
  // A new vend request carries new ids: answer it before matching inputs to this session.
  if (input.type === "vendRequested") return denyBusy(state, "a payment is already running");
  const sid = sessionOf(input);
  if (sid !== null && sid !== state.session.id) return stay(state, input, "input of another session");
  const { session } = state;
  const forVend = state.purpose === "vend";
  switch (input.type) {
    case "paymentStarted":
      if (state.abandon !== null) return cancelPayment({ ...state, ref: input.ref }, state.abandon, false);
      return {
        state: { ...state, ref: input.ref },
        effects: [{ type: "watchPayment", session, ref: input.ref }, ...qrOnceStarted(state, ctx)],
      };
    case "paymentStartFailed": {
      const t = endUnpaid(state, input.reason, input.unresolved ? "unsettled" : "denied", ctx);
      if (forVend || ctx.checkinMode !== "idlePayment") return t;
      // The next idle payment waits a little, so that a refusing service is not hammered.
      return {
        state: { tag: "ready", allocating: false },
        effects: [
          ...t.effects.filter((e) => e.type !== "allocateSession"),
          { type: "startTimer", sessionId: "", timer: "retry", ms: RETRY_MS },
        ],
      };
    }
    case "paymentUpdate":
      if (state.ref === null || input.observation.ref.id !== state.ref.id) {
        return stay(state, input, "update of another payment");
      }
      return onPaymentUpdate(state, input.observation, ctx);
    case "timeout":
      if (input.timer !== "payment") return stay(state, input, "timer not armed in this state");
      return abandon(state, "customer did not pay in time", forVend);
    case "vendCancelled":
      if (!forVend) return stay(state, input, "no vend request in a check-in reservation");
      return abandon(state, "the machine cancelled the vend", false);
    case "vmcReset":
      if (!forVend) return stay(state, input, "no vend request in a check-in reservation");
      return abandon(state, `the machine reset (${input.reason})`, false);
    default:
      return stay(state, input, "not expected while paying");
  }
}

/**
 * The QR code appears only once the payment exists at the service: before that a customer who scanned
 * would find nothing to pay. A vend's `pay` screen; an idle payment's check-in screen. A check-in session in
 * `poll` mode needs nothing: its customer has already checked in.
 */
function qrOnceStarted(state: Paying, ctx: EngineContext): Effect[] {
  const { session } = state;
  if (state.purpose === "vend") {
    return [
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
    ];
  }
  return ctx.checkinMode === "idlePayment" ? [checkinScreen(ctx)] : [];
}

/** Delay before the next idle payment after a refused start, ms. */
export const RETRY_MS = 5000;

function onPaymentUpdate(state: Paying, obs: PaymentObservation, ctx: EngineContext): Transition {
  const { session } = state;
  const ref = state.ref ?? obs.ref;
  switch (obs.state) {
    case "pending":
      return { state, effects: [] };
    case "issued": {
      if (state.issued || state.abandon !== null) return { state, effects: [] };
      const effects: Effect[] = [
        { type: "show", screen: { kind: "approveInApp", amount: session.price, currency: ctx.currency } },
      ];
      if (state.purpose === "session") {
        effects.push({
          type: "startTimer",
          sessionId: session.id,
          timer: "payment",
          ms: ctx.paymentTimeoutMs,
        });
      }
      return { state: { ...state, issued: true }, effects };
    }
    case "reserved":
    case "paid": {
      if (state.abandon !== null) return cancelPayment({ ...state, ref }, state.abandon, false);
      if (state.purpose === "session") return openSession(state, obs, ctx);
      if (obs.amount !== session.price) {
        // vending-mdb §1.5 rule 5: never approve an amount other than the requested one; a reservation the
        // service does not confirm at exactly the price (or at no stated amount) is released, not trusted.
        const why =
          obs.amount === null
            ? "the service did not confirm the amount"
            : "the reserved amount differs from the price";
        return cancelPayment({ ...state, ref }, why, true);
      }
      return {
        state: { tag: "vending", session, ref },
        effects: [
          { type: "stopWatching", sessionId: session.id },
          { type: "clearTimer", sessionId: session.id, timer: "payment" },
          { type: "approveVend", session, item: session.item, amount: session.price },
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
      return endUnpaid(state, state.abandon ?? why, "denied", ctx);
    }
    case "captured":
      // Only this unit captures; a capture it did not make needs a person to look at it.
      return endUnpaid(state, "payment captured before the vend was approved", "unsettled", ctx);
  }
}

/** Check-in first: the reservation holds; offer the funds to the VMC. */
function openSession(state: Paying, obs: PaymentObservation, ctx: EngineContext): Transition {
  const { session } = state;
  const ref = state.ref ?? obs.ref;
  const funds = obs.amount ?? session.price;
  return {
    // The older interface does not report partialCapturePossible: a Partial reservation allows it.
    state: { tag: "session", session, ref, funds, partial: obs.partialCapturePossible !== false, vended: 0 },
    effects: [
      { type: "stopWatching", sessionId: session.id },
      { type: "clearTimer", sessionId: session.id, timer: "payment" },
      { type: "beginSession", session, funds },
      { type: "show", screen: { kind: "session", available: funds, currency: ctx.currency } },
      { type: "startTimer", sessionId: session.id, timer: "session", ms: ctx.paymentTimeoutMs },
    ],
  };
}

/** The payment ended (or never started) without funds to settle: deny if the VMC still waits. */
function endUnpaid(
  state: Paying,
  reason: string,
  result: "denied" | "unsettled",
  ctx: EngineContext,
): Transition {
  const { session } = state;
  const effects: Effect[] = [
    { type: "stopWatching", sessionId: session.id },
    { type: "clearTimer", sessionId: session.id, timer: "payment" },
  ];
  if (state.abandon === null && state.purpose === "vend") {
    effects.push({ type: "denyVend", sessionId: session.id, reason });
    effects.push({ type: "show", screen: { kind: "cancelled", reason } });
  }
  return finish(session, result, reason, ctx, effects);
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
