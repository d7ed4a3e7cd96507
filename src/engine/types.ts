import type { Screen } from "../../drivers/display/display.js";
import type { Minor } from "../core/money.js";
import type { PlanMember, SessionResult, SettleAction } from "../journal/journal.js";
import type { PaymentObservation, PaymentRef } from "../payment/driver.js";

/**
 * The vend engine is a pure state machine: `transition(state, input, ctx)` returns the next state and a list
 * of effects. The runner (runner.ts) performs the effects (journal, payment, VMC, display, timers) and feeds
 * their results, the VMC's events and timer expiries back as inputs. Nothing here does I/O or reads a clock.
 */

/**
 * One customer session, from the first payment request to the payment's final settlement. Selection first:
 * one vend at `price`. Check-in first: a reservation of `price` (the session maximum) and any number of
 * vends within it.
 */
export interface Session {
  /** Journal id of the session (UUID). */
  id: string;
  /** Merchant order id sent to the service (≤ 32 characters). */
  orderId: string;
  /** VMC item (selection) number; 0 for a check-in session. */
  item: number;
  /** Amount of the payment in minor units: the vend's price, or the session maximum. */
  price: Minor;
}

export type Flow = "selection" | "checkin";

/** A vend inside a check-in session. */
export interface SessionVend {
  item: number;
  price: Minor;
}

/**
 * What a member's badge decided for a vend request (issue 18), made by the daemon's member gate before the
 * request reaches the machine: `grant` a plan vend (no payment) to `member`, or `deny` it with a message
 * for the screen. No decision (undefined) is the normal payment flow.
 */
export type PlanDecision = { kind: "grant"; member: PlanMember } | { kind: "deny"; message: string };

/** Settlement actions and session results are the journal's record, defined with it (one layer down). */
export type { PlanMember, SessionResult, SettleAction } from "../journal/journal.js";

export type EngineState =
  /** Selection first, no session: waiting for the VMC's vend request. */
  | { tag: "idle" }
  /**
   * Check-in first, no session: the QR code is shown. `allocating` while the runner creates the next
   * session's ids (after a check-in, or at once in `idlePayment` mode).
   */
  | { tag: "ready"; allocating: boolean }
  | {
      tag: "paying";
      /** `vend`: a VMC vend request waits for this payment; `session`: a check-in session's reservation. */
      purpose: "vend" | "session";
      session: Session;
      /** Null until the service has confirmed the payment's creation. */
      ref: PaymentRef | null;
      /** Set when the vend can no longer happen (VMC left, timeout): the payment is cancelled when known. */
      abandon: string | null;
      /** True once the customer has the payment in the app. */
      issued: boolean;
    }
  | { tag: "vending"; session: Session; ref: PaymentRef }
  /** Selection first: a plan vend (no payment) is approved at the VMC for `member`; its outcome is recorded. */
  | { tag: "planVending"; session: Session; member: PlanMember }
  /** Check-in first: funds reserved and offered to the VMC; the customer chooses products. */
  | { tag: "session"; session: Session; ref: PaymentRef; funds: Minor; partial: boolean; vended: Minor }
  | {
      tag: "sessionVending";
      session: Session;
      ref: PaymentRef;
      funds: Minor;
      partial: boolean;
      vended: Minor;
      current: SessionVend;
    }
  | {
      tag: "settling";
      session: Session;
      ref: PaymentRef;
      action: SettleAction;
      amount: Minor;
      /** Journal result once the settlement is confirmed. */
      result: SessionResult;
      reason: string;
    };

/**
 * `payment`: the customer must have paid; `vend`: the VMC must report the vend; `session`: the customer must
 * choose (check-in session); `retry`: check-in first, start the next idle payment after a refused start.
 */
export type TimerName = "payment" | "vend" | "session" | "retry";

export type EngineInput =
  /** The VMC asked for a vend; the runner has allocated the session's ids. */
  | {
      type: "vendRequested";
      item: number;
      price: Minor;
      sessionId: string;
      orderId: string;
      /** A member's plan decision for this request (selection first, idle only); absent: pay as usual. */
      plan?: PlanDecision | undefined;
    }
  /** Check-in first: a customer checked in on the PoS (check-in poll). */
  | { type: "checkedIn" }
  /** Check-in first: the runner allocated the ids of the next session (answer to `allocateSession`). */
  | { type: "sessionAllocated"; sessionId: string; orderId: string }
  /** The VMC ended the session (session complete, return button). */
  | { type: "sessionEnded" }
  | { type: "paymentStarted"; sessionId: string; ref: PaymentRef }
  /**
   * The payment could not be started. `unresolved` is true when the service may still hold it (ambiguous
   * failure that a lookup could not settle): the session stays open in the journal for recovery.
   */
  | { type: "paymentStartFailed"; sessionId: string; reason: string; unresolved: boolean }
  | { type: "paymentUpdate"; sessionId: string; observation: PaymentObservation }
  /** The VMC refused or could not take our approval (e.g. it already left the vend). */
  | { type: "approveFailed"; sessionId: string; reason: string }
  | { type: "vendSucceeded"; item: number | null }
  | { type: "vendFailed" }
  | { type: "vendCancelled" }
  | { type: "vmcReset"; reason: string }
  | { type: "timeout"; sessionId: string; timer: TimerName }
  | { type: "settled"; sessionId: string }
  | { type: "settleFailed"; sessionId: string; reason: string };

export type Effect =
  /** Journal the new session before anything is sent for it (with its member for a plan vend). */
  | { type: "openSession"; session: Session; member?: PlanMember | undefined }
  /** Journal the payment intent (with its idempotency key), then start the payment. */
  | { type: "startPayment"; session: Session; purpose: "vend" | "session" }
  /** Poll the payment, honouring the service's poll delay, until told to stop or it is final. */
  | { type: "watchPayment"; session: Session; ref: PaymentRef }
  | { type: "stopWatching"; sessionId: string }
  /** Journal "vend approved" durably, then approve exactly `amount` at the VMC. */
  | { type: "approveVend"; session: Session; item: number; amount: Minor }
  /** Check-in first: create the next session's ids and answer with `sessionAllocated`. */
  | { type: "allocateSession" }
  /** Check-in first (`poll` mode): poll the check-in query while the QR code is shown. */
  | { type: "watchCheckin" }
  | { type: "stopCheckin" }
  /** Check-in first: offer the reserved funds to the VMC (BEGIN SESSION). */
  | { type: "beginSession"; session: Session; funds: Minor }
  /** Check-in first: tell the VMC the session is over. */
  | { type: "endSession"; session: Session }
  /**
   * Deny the pending vend request (`sessionId` null: a request that never became a session). `refused`: the
   * unit's own rule refused the request (its price out of bounds), logged at warn level with item and price.
   */
  | { type: "denyVend"; sessionId: string | null; reason: string; refused?: { item: number; price: number } }
  /** Journal the decision and the intent, then capture or cancel. Retried by the runner until confirmed. */
  | {
      type: "settle";
      session: Session;
      ref: PaymentRef;
      action: SettleAction;
      amount: Minor;
      reason: string;
      review: boolean;
    }
  /** Record the VMC's outcome of the approved vend. */
  | { type: "recordVend"; session: Session; outcome: "success" | "failure" | "unknown" | "cancelled" }
  | { type: "finishSession"; session: Session; result: SessionResult; reason: string }
  | { type: "show"; screen: Screen }
  | { type: "startTimer"; sessionId: string; timer: TimerName; ms: number }
  | { type: "clearTimer"; sessionId: string; timer: TimerName }
  /** An input that does not fit the state: logged, never acted on. */
  | { type: "ignored"; input: EngineInput["type"]; state: EngineState["tag"]; reason: string };

/** Fixed facts the machine needs; from config and from the payment driver's `open()`. */
export interface EngineContext {
  flow: Flow;
  /**
   * Check-in first: how the unit learns of a check-in. `poll`: poll the check-in query while the QR code is
   * shown; `idlePayment`: keep a payment for the session maximum initiated while idle.
   */
  checkinMode: "poll" | "idlePayment";
  /** Check-in first: the amount reserved per session, minor units. */
  sessionMax: Minor;
  /**
   * Selection first: the highest price paid for, minor units (`engine.maxPrice`). The price comes from the
   * VMC, so a request above it (or not positive) is denied without contacting the payment service.
   */
  maxPrice: Minor;
  currency: string;
  /** QR content that lets a customer check in on this unit. */
  checkinUri: string;
  /** How long the customer has to pay, ms. */
  paymentTimeoutMs: number;
  /** How long the VMC has to report the vend outcome, ms. */
  vendTimeoutMs: number;
  /** What an approved vend with an unknown outcome becomes (MDB §7.4.7: success → capture). */
  unknownOutcome: SettleAction;
  /**
   * Selection first, members only (issue 31): the payment service has not been reached since the start,
   * so no payment can be made; a vend request without a member's grant is denied at the machine with
   * CARD_UNAVAILABLE, never a payment attempt. Absent or false: payments as usual.
   */
  membersOnly?: boolean;
}

export interface Transition {
  state: EngineState;
  effects: Effect[];
}
