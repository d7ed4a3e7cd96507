import type { Minor } from "../core/money.js";
import type { SettleAction, VendOutcome } from "../journal/journal.js";
import type { PaymentState } from "../payment/driver.js";

/** One approved vend as the settlement sees it: the amount approved at the VMC and what became of it. */
export interface VendFact {
  amount: Minor;
  /** `null`: approved, but no outcome was ever recorded (the unit stopped): the same as `unknown`. */
  outcome: VendOutcome | null;
}

export interface SettlementInput {
  /** The amount the payment holds: the vend's price (selection) or the session's funds (check-in). */
  price: Minor;
  /** The session's approved vends, in order. */
  vends: readonly VendFact[];
  /** What the service says about the payment, when it was asked (recovery); absent in the live engine. */
  paymentState?: PaymentState;
  /** How the payment was started: a reservation is cancelled, a direct payment is refunded. */
  mode: "reservation" | "payment";
  /** What an approved vend with an unknown outcome becomes (MDB §7.4.7 default: capture). */
  policy: SettleAction;
  /** Why the session ends, as the caller saw it; replaces the default reason (the policy is appended). */
  why?: string;
}

export type SettlementAction = "capture" | "cancel" | "refund" | "none";

export interface Settlement {
  action: SettlementAction;
  /** Capture: what to charge; cancel/refund: the amount held; none: 0. */
  amount: Minor;
  reason: string;
  /** A vend's outcome is unknown, or the service settled without us: a person should look. */
  review: boolean;
}

/** Payment states in which the service still holds (or has taken) the customer's money for this session. */
const HOLDS_FUNDS: ReadonlySet<PaymentState> = new Set(["reserved", "paid", "pending", "issued"]);

/**
 * The one money policy (vending-mdb §1.5, MDB §7.4.7), pure so that the engine's transitions, recovery and
 * the consistency checker cannot disagree. Delivered vends are charged; an approved vend whose outcome is
 * unknown (reset or timeout after the approval, or a crash) follows `policy` and flags the session for
 * review; failed or cancelled vends are not charged; with nothing to charge the payment is released
 * (cancelled, or refunded when it was a direct payment). Decision table:
 *
 * | paymentState          | charged > 0             | charged = 0                      |
 * |-----------------------|-------------------------|----------------------------------|
 * | absent / holds funds  | capture charged         | cancel price (refund if payment) |
 * | captured              | capture price, review   | capture price, review            |
 * | cancelled/expired/... | none                    | none                             |
 *
 * where charged = delivered + (policy capture ? unknown : 0) and review = any unknown outcome.
 */
export function decideSettlement(input: SettlementInput): Settlement {
  const { paymentState: state, policy, price } = input;
  if (state === "captured")
    return { action: "capture", amount: price, reason: "already captured", review: true };
  if (state !== undefined && !HOLDS_FUNDS.has(state))
    return { action: "none", amount: 0, reason: `payment ${state}, nothing to settle`, review: false };
  const delivered = sum(input.vends.filter((v) => v.outcome === "success"));
  const unknown = sum(input.vends.filter((v) => v.outcome === null || v.outcome === "unknown"));
  const review = input.vends.some((v) => v.outcome === null || v.outcome === "unknown");
  const charged = delivered + (policy === "capture" ? unknown : 0);
  const base =
    input.why ??
    (review
      ? "vends with unknown outcome"
      : charged > 0
        ? "vends delivered"
        : input.vends.length === 0
          ? "vend never approved"
          : "nothing delivered");
  const reason = review ? `${base}; policy: ${policy}` : base;
  if (charged > 0) return { action: "capture", amount: charged, reason, review };
  return { action: input.mode === "payment" ? "refund" : "cancel", amount: price, reason, review };
}

/**
 * The journal's and the payment layer's name for a settlement: a refund is the cancel of a direct payment
 * (`settlePayment` refunds a cancelled `payment`-mode ref). `none` has no action: the caller must not settle.
 */
export function settleActionOf(s: Settlement): SettleAction {
  if (s.action === "none") throw new Error(`no settlement to apply: ${s.reason}`);
  return s.action === "capture" ? "capture" : "cancel";
}

function sum(vends: readonly VendFact[]): Minor {
  return vends.reduce((a, v) => a + v.amount, 0);
}
