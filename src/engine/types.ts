import type { Screen } from "../../drivers/display/display.js";
import type { Minor } from "../core/money.js";
import type { PaymentObservation, PaymentRef } from "../payment/driver.js";

/**
 * The vend engine is a pure state machine: `transition(state, input, ctx)` returns the next state and a list
 * of effects. The runner (runner.ts) performs the effects (journal, payment, VMC, display, timers) and feeds
 * their results, the VMC's events and timer expiries back as inputs. Nothing here does I/O or reads a clock.
 */

/** One customer session: from the VMC's vend request to the payment's final settlement. */
export interface Session {
  /** Journal id of the session (UUID). */
  id: string;
  /** Merchant order id sent to the service (≤ 32 characters). */
  orderId: string;
  /** VMC item (selection) number. */
  item: number;
  /** Requested price in minor units; the only amount vendd ever approves for this vend. */
  price: Minor;
}

export type SettleAction = "capture" | "cancel";

/** How a session ended, as the journal records it. */
export type SessionResult =
  /** The vend was delivered and the payment captured. */
  | "captured"
  /** The vend failed or was abandoned after the funds were reserved; the reservation was released. */
  | "cancelled"
  /** The vend was denied before anything was reserved (customer rejected, timed out, service refused). */
  | "denied"
  /** The payment could not be settled now; the journal keeps the decision for recovery. */
  | "unsettled";

export type EngineState =
  | { tag: "idle" }
  | {
      tag: "paying";
      session: Session;
      /** Null until the service has confirmed the payment's creation. */
      ref: PaymentRef | null;
      /** Set when the vend can no longer happen (VMC left, timeout): the payment is cancelled when known. */
      abandon: string | null;
      /** True once the customer has the payment in the app. */
      issued: boolean;
    }
  | { tag: "vending"; session: Session; ref: PaymentRef }
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

export type TimerName = "payment" | "vend";

export type EngineInput =
  /** The VMC asked for a vend; the runner has allocated the session's ids. */
  | { type: "vendRequested"; item: number; price: Minor; sessionId: string; orderId: string }
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
  /** Journal the new session durably before anything is sent for it. */
  | { type: "openSession"; session: Session }
  /** Journal the payment intent (with its idempotency key), then start the payment. */
  | { type: "startPayment"; session: Session }
  /** Poll the payment, honouring the service's poll delay, until told to stop or it is final. */
  | { type: "watchPayment"; session: Session; ref: PaymentRef }
  | { type: "stopWatching"; sessionId: string }
  /** Journal "vend approved" durably, then approve exactly `amount` at the VMC. */
  | { type: "approveVend"; session: Session; amount: Minor }
  /** Deny the pending vend request (`sessionId` null: a request that never became a session). */
  | { type: "denyVend"; sessionId: string | null; reason: string }
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
  currency: string;
  /** QR content that lets a customer check in on this unit. */
  checkinUri: string;
  /** How long the customer has to pay, ms. */
  paymentTimeoutMs: number;
  /** How long the VMC has to report the vend outcome, ms. */
  vendTimeoutMs: number;
  /** What an approved vend with an unknown outcome becomes (MDB §7.4.7: success → capture). */
  unknownOutcome: SettleAction;
}

export interface Transition {
  state: EngineState;
  effects: Effect[];
}
