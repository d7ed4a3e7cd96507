import { currencyOfMerchant } from "../currency.js";
import type { StatsRecorder } from "../stats.js";
import type { EmuClock, Ledger, SimUser } from "../types.js";
import type { TokenService } from "./auth.js";
import type { IdempotencyStore } from "./idempotency.js";
import type { Payment, PaymentStatus, Pos, Refund, V10Config } from "./model.js";
import { ACTIVE_STATES, RESERVATION_MS } from "./model.js";
import type { V10World } from "./world.js";

/** Everything the V10 routes and the payment machine share. */
export interface V10Deps {
  world: V10World;
  config: V10Config;
  clock: EmuClock;
  ledger: Ledger;
  stats: StatsRecorder;
  tokens: TokenService;
  idempotency: IdempotencyStore;
  /** Sends the notification-service callback of a PoS created with a callback alias (pos-v10 §16). */
  notifyCheckin(pos: Pos): void;
  /** True when the alias has a registered callback URL. */
  hasCallbackAlias(alias: string): boolean;
}

/** States inactivity cancels (pos-v10 §7: Prepared, Initiated, IssuedToUser). */
const INACTIVITY_STATES: ReadonlySet<PaymentStatus> = new Set(["Prepared", "Initiated", "IssuedToUser"]);

/** Moves a payment to a final state other than Captured. */
export function finish(d: V10Deps, p: Payment, status: PaymentStatus, at: number): void {
  p.status = status;
  p.since = at;
  if (p.pos.active === p) p.pos.active = null;
  d.world.retire(p, at);
}

/** The user's card cannot pay under the payment's restrictions (pos-v10 §5 PaymentRestrictions). */
function refusedByRestrictions(p: Payment, user: SimUser): boolean {
  const r = p.restrictions;
  if (r === null) return false;
  if (r.debitCardDisallowed === true && user.features.includes("debitCard")) return true;
  return r.creditCardDisallowed === true && !user.features.includes("debitCard");
}

function reserveDue(d: V10Deps, p: Payment, at: number): void {
  const user = p.user;
  if (user === null || p.amount === null) return;
  if (user.features.includes("insufficientFunds") || refusedByRestrictions(p, user)) {
    // pos-v10 §7: an error while reserving → CancelledByService; nothing is reserved.
    finish(d, p, "CancelledByService", at);
    return;
  }
  p.status = "Reserved";
  p.since = at;
  p.acceptDueAt = null;
  p.expiresAt = at + RESERVATION_MS;
  if (p.pos.active === p) p.pos.active = null;
  d.ledger.record({
    interface: "v10",
    ...ledgerScope(d, p),
    id: p.paymentId,
    paymentId: null,
    orderId: p.orderId,
    kind: "reserved",
    amount: p.amount,
  });
}

/** The merchant (VAT) and payment point (storeId) a V10 ledger entry belongs to, for transaction reporting. */
export function ledgerScope(d: V10Deps, p: Payment): { merchant?: string; point: string; currency: string } {
  const vat = d.world.stores.get(p.pos.storeId)?.vat;
  // A payment that moves money has terms, so its currency; a store's own currency only for a termless cancel.
  const currency = p.currency ?? currencyOfMerchant(vat ?? "");
  return vat === undefined
    ? { point: p.pos.storeId, currency }
    : { merchant: vat, point: p.pos.storeId, currency };
}

/**
 * Applies every time rule that became due by `now` (pos-v10 §7): accept → Reserved (or refused), inactivity
 * → CancelledByService, 7 days in Reserved → ExpiredAndCancelled. Called lazily on access and on each tick.
 */
export function refreshPayment(d: V10Deps, p: Payment, now: number): void {
  for (let step = 0; step < 3; step++) {
    if (p.status === "IssuedToUser" && p.acceptDueAt !== null) {
      if (now < p.acceptDueAt) return;
      reserveDue(d, p, p.acceptDueAt);
    } else if (INACTIVITY_STATES.has(p.status)) {
      const due = p.since + d.config.inactivityMs;
      if (now < due) return;
      finish(d, p, "CancelledByService", due);
    } else if (p.status === "Reserved" && p.expiresAt !== null) {
      if (now < p.expiresAt) return;
      finish(d, p, "ExpiredAndCancelled", p.expiresAt);
      d.ledger.record({
        interface: "v10",
        ...ledgerScope(d, p),
        id: p.paymentId,
        paymentId: null,
        orderId: p.orderId,
        kind: "expired",
        amount: p.amount ?? 0,
      });
    } else {
      return;
    }
  }
}

/** The PoS's active payment after applying due time rules. */
export function activePayment(d: V10Deps, pos: Pos, now: number): Payment | null {
  const p = pos.active;
  if (p === null) return null;
  refreshPayment(d, p, now);
  return pos.active;
}

/** The PoS's unpaired check-in, unless it lapsed (pos-v10 §10: default 120 s). */
export function currentCheckin(d: V10Deps, pos: Pos, now: number): Pos["checkin"] {
  const c = pos.checkin;
  if (c !== null && now >= c.at + d.config.checkinTimeoutMs) {
    pos.checkin = null;
    d.world.checkins.delete(pos);
    return null;
  }
  return c;
}

/** Pairs a user with a payment: Initiated → IssuedToUser, Prepared → Paired (pos-v10 §7). */
export function pair(p: Payment, user: SimUser, now: number): void {
  p.user = user;
  p.status = p.status === "Prepared" ? "Paired" : "IssuedToUser";
  p.since = now;
}

/** A user accepts an IssuedToUser payment; it becomes Reserved after the configured delays. */
export function accept(d: V10Deps, p: Payment, now: number): void {
  if (p.acceptDueAt !== null || p.user === null) return;
  const slow = p.user.features.includes("slowToAccept") ? d.config.slowAcceptMs : 0;
  p.acceptDueAt = now + slow + d.config.acceptToReservedMs;
  refreshPayment(d, p, now);
}

/** Whether a state is active (blocks a new payment on the PoS). */
export function isActive(status: PaymentStatus): boolean {
  return ACTIVE_STATES.has(status);
}

/** Runs the time rules of every live payment, refund and check-in, then purges old records. */
export function tick(d: V10Deps, now: number, refreshRefund: (now: number) => void): void {
  for (const p of d.world.live) refreshPayment(d, p, now);
  refreshRefund(now);
  for (const pos of d.world.checkins) currentCheckin(d, pos, now);
  d.world.purge(now);
  d.idempotency.purge(now);
}

/** When a payment's next time rule is due (`refreshPayment`'s order), or null when none applies. */
export function paymentDue(d: V10Deps, p: Payment): number | null {
  if (p.status === "IssuedToUser" && p.acceptDueAt !== null) return p.acceptDueAt;
  if (INACTIVITY_STATES.has(p.status)) return p.since + d.config.inactivityMs;
  if (p.status === "Reserved") return p.expiresAt;
  return null;
}

/**
 * The earliest time rule of a live payment, a live refund (`refundDue`) or an unpaired check-in: where the
 * clock stops within an advance; null when nothing waits.
 */
export function nextDue(d: V10Deps, refundDue: (r: Refund) => number | null): number | null {
  let min: number | null = null;
  const consider = (t: number | null): void => {
    if (t !== null && (min === null || t < min)) min = t;
  };
  for (const p of d.world.live) consider(paymentDue(d, p));
  for (const r of d.world.liveRefunds) consider(refundDue(r));
  for (const pos of d.world.checkins)
    if (pos.checkin !== null) consider(pos.checkin.at + d.config.checkinTimeoutMs);
  return min;
}
