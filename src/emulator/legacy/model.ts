import { createHash, randomUUID } from "node:crypto";
import { currencyOfMerchant } from "../currency.js";
import type { EmuClock, Ledger, LedgerKind, SimUser } from "../types.js";
import { LegacyFault } from "./fields.js";
import {
  ACTIVE,
  type Entity,
  type LegacyTiming,
  type PaidOrder,
  type PosRecord,
  setStatus,
} from "./state.js";

/** Collaborators of the older-interface model (the emulator's shared clock, ledger and users). */
export interface LegacyDeps {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
}

/** The one merchant and location the model serves, with its secrets (emulator test data). */
export interface LegacySeed {
  merchantId: string;
  locationId: string;
  apiKey: string;
  merchantKey: string;
  locationName: string;
}

/** Refunds are possible for 3 calendar months after payment (seed "Limits": refundable age). */
export const REFUND_MONTHS = 3;

/**
 * The older interface's state: PoSes, their payment slot, reservations by OrderId and refundable orders.
 * Time rules (pos-legacy §6 timeout, §7 7-day release) are applied lazily when a record is read and by
 * `sweep()` on every clock tick.
 */
export class LegacyModel {
  readonly poses = new Map<string, PosRecord>();
  /** Reservations by OrderId, apart from each PoS's "current" slot (pos-legacy §7 [P]). */
  readonly reservations = new Map<string, Entity>();
  /** Done payments and captured reservations by OrderId (refundable). */
  readonly paid = new Map<string, PaidOrder>();
  private txSeq = 0;

  constructor(
    readonly deps: LegacyDeps,
    readonly seed: LegacySeed,
    readonly timing: LegacyTiming,
  ) {}

  now(): number {
    return this.deps.clock.now();
  }

  /** Refuses a MerchantId/LocationId pair other than the seeded one with `code` (30 or 10 per operation). */
  requireLocation(merchantId: string, locationId: string, code: 10 | 30): void {
    if (merchantId !== this.seed.merchantId || locationId !== this.seed.locationId) {
      throw new LegacyFault(code, "The key MerchantId/LocationId does not exist");
    }
  }

  /** A registered PoS, settled; refuses an unknown one with `code`. */
  pos(posId: string, code: 10 | 30 = 30): PosRecord {
    const p = this.poses.get(posId);
    if (!p) throw new LegacyFault(code, "The key MerchantId/LocationId/PoSId does not exist");
    this.settlePos(p);
    return p;
  }

  posByUnit(unitId: string): PosRecord | undefined {
    for (const p of this.poses.values()) if (p.unitId === unitId) return p;
    return undefined;
  }

  /** A reservation of this PoS by OrderId, settled. */
  reservation(orderId: string, posId: string): Entity | undefined {
    const r = this.reservations.get(orderId);
    if (!r || r.posId !== posId) return undefined;
    this.settle(r);
    return r;
  }

  /** The PoS's active payment or reservation (at most one exists: starts are refused while one is active). */
  active(p: PosRecord): Entity | null {
    if (p.payment && ACTIVE.has(p.payment.status)) return p.payment;
    const r = p.reservationOrderId === null ? undefined : this.reservations.get(p.reservationOrderId);
    return r && ACTIVE.has(r.status) ? r : null;
  }

  settlePos(p: PosRecord): void {
    const now = this.now();
    if (p.checkin && now - p.checkin.at >= this.timing.checkinMs) p.checkin = null;
    if (p.payment) this.settle(p.payment);
    const r = p.reservationOrderId === null ? undefined : this.reservations.get(p.reservationOrderId);
    if (r) this.settle(r);
  }

  /** Applies the due time rules to one entity. */
  settle(e: Entity): void {
    const now = this.now();
    if (e.status === 80 && e.confirmAt !== null && now >= e.confirmAt) this.done(e);
    if (
      (e.status === 20 || e.status === 30 || e.status === 60) &&
      now - e.since >= this.timing.acceptTimeoutMs
    ) {
      setStatus(e, 40, now);
    }
    const releasable = e.kind === "reservation" && e.status === 100 && !e.captured && !e.released;
    if (releasable && e.doneAt !== null && now - e.doneAt >= this.timing.releaseMs) {
      e.released = "expired";
      setStatus(e, 40, now);
      this.record("expired", e.orderId, e.amount);
    }
  }

  /** When an entity's next time rule (`settle`) is due, or null when none applies. */
  private entityDue(e: Entity): number | null {
    if (e.status === 80 && e.confirmAt !== null) return e.confirmAt;
    if (e.status === 20 || e.status === 30 || e.status === 60) return e.since + this.timing.acceptTimeoutMs;
    const releasable = e.kind === "reservation" && e.status === 100 && !e.captured && !e.released;
    return releasable && e.doneAt !== null ? e.doneAt + this.timing.releaseMs : null;
  }

  /** The earliest time rule of any record (where the clock stops within an advance); null when none. */
  nextDue(): number | null {
    let min: number | null = null;
    const consider = (t: number | null): void => {
      if (t !== null && (min === null || t < min)) min = t;
    };
    for (const p of this.poses.values()) {
      if (p.checkin) consider(p.checkin.at + this.timing.checkinMs);
      if (p.payment) consider(this.entityDue(p.payment));
    }
    for (const r of this.reservations.values()) consider(this.entityDue(r));
    return min;
  }

  /** Runs every time rule on every record and purges records older than the refund window. */
  sweep(): void {
    for (const p of this.poses.values()) this.settlePos(p);
    const horizon = addMonths(this.now(), -REFUND_MONTHS) - this.timing.releaseMs;
    for (const [orderId, r] of this.reservations) {
      this.settle(r);
      const current = this.poses.get(r.posId)?.reservationOrderId === orderId;
      if (!current && !ACTIVE.has(r.status) && r.updatedAt < horizon) this.reservations.delete(orderId);
    }
    for (const [orderId, o] of this.paid) if (o.at < horizon) this.paid.delete(orderId);
  }

  /** Pairs a checked-in user with a new entity; true when a loyalty recalculation is needed (60). */
  pair(e: Entity, user: SimUser): boolean {
    const now = this.now();
    e.user = user;
    e.updatedAt = now;
    e.customerReceiptToken = user.features.includes("receiptToken") ? receiptToken(user.phone) : null;
    const loyal = user.features.includes("loyaltyMember");
    e.customerToken = loyal ? loyaltyToken(user.phone) : null;
    // pos-legacy §6: a loyalty member with CustomerTokenCalc 0 sends the payment to AwaitTokenRecalc.
    const recalc = e.kind === "payment" && loyal && e.customerTokenCalc === 0;
    setStatus(e, recalc ? 60 : 20, now);
    return recalc;
  }

  /** 80 → 100: TransactionId filled, the ledger records the money movement. */
  done(e: Entity): void {
    const now = this.now();
    setStatus(e, 100, now);
    e.doneAt = now;
    e.confirmAt = null;
    e.transactionId = this.nextTransactionId();
    e.customerId = e.user ? customerId(e.user.phone) : null;
    if (e.kind === "payment") {
      const order = { orderId: e.orderId, posId: e.posId, amount: e.amount, refunded: 0, at: now, entity: e };
      this.paid.set(e.orderId, order);
      this.record("paid", e.orderId, e.amount);
    } else {
      this.record("reserved", e.orderId, e.amount);
    }
  }

  /** Cancels the PoS's active entity (unit reassignment, seed rule of AssignPoSUnitIdToPos). */
  cancelActive(p: PosRecord): void {
    const e = this.active(p);
    if (e) setStatus(e, 40, this.now());
  }

  record(kind: LedgerKind, orderId: string, amount: number, paymentId: string | null = null): void {
    const { merchantId: merchant, locationId: point } = this.seed;
    this.deps.ledger.record({
      interface: "legacy",
      merchant,
      point,
      id: orderId,
      paymentId,
      orderId,
      kind,
      amount,
      currency: currencyOfMerchant(merchant),
    });
  }

  nextTransactionId(): string {
    this.txSeq += 1;
    return String(5_000_000_000 + this.txSeq);
  }

  newPosId(): string {
    return randomUUID();
  }
}

/** Adds calendar months in UTC (negative to subtract). */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.getTime();
}

function digest(kind: string, phone: string, length: number): string {
  return createHash("sha256").update(`${kind}:${phone}`).digest("hex").slice(0, length);
}

/** Opaque, stable customer id per user (no phone number leaves the emulator in it). */
export function customerId(phone: string): string {
  return `C${digest("customer", phone, 15)}`;
}

/** The loyalty card number of a member (CustomerToken). */
export function loyaltyToken(phone: string): string {
  const n = BigInt(`0x${digest("loyalty", phone, 12)}`) % 10_000_000_000n;
  return `LOY${n.toString().padStart(10, "0")}`;
}

/** A receipt-service user id (CustomerReceiptToken, ≤ 32 characters). */
export function receiptToken(phone: string): string {
  return `RCPT-${digest("receipt", phone, 20)}`;
}
