import type { Owner, Payment, Pos, Refund, Store } from "./model.js";
import { REFUND_MAX_AGE_MS } from "./model.js";

interface Retired {
  payment: Payment;
  /** Emulator ms after which the payment is purged. */
  purgeAt: number;
}

/** A FIFO of retired payments; purge times within one queue never decrease. */
class RetireQueue {
  private items: Retired[] = [];
  private head = 0;

  push(item: Retired): void {
    this.items.push(item);
  }

  /** Removes and yields every item due at `now`. */
  *due(now: number): Generator<Payment> {
    while (this.head < this.items.length) {
      const item = this.items[this.head];
      if (!item || item.purgeAt > now) break;
      this.head += 1;
      yield item.payment;
    }
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

const ownerKey = (o: Owner, id: string): string => `${o.clientId}\n${o.vat}\n${id}`;

/**
 * The V10 records and their indexes, for O(1) lookups on the polling hot path. Finished payments are purged
 * after the retention; captured ones stay at least for the 90-day refund window (pos-v10 §8) so that
 * refunds and 1366 remain reachable.
 */
export class V10World {
  readonly stores = new Map<string, Store>();
  readonly poses = new Map<string, Pos>();
  readonly payments = new Map<string, Payment>();
  readonly refunds = new Map<string, Refund>();
  /** Payments not yet final (Reserved included): the tick re-evaluates them. */
  readonly live = new Set<Payment>();
  /** Refunds not yet final. */
  readonly liveRefunds = new Set<Refund>();
  /** PoSes holding an unpaired check-in. */
  readonly checkins = new Set<Pos>();
  private readonly beacons = new Map<string, Pos>();
  private readonly merchantPosIds = new Map<string, Pos>();
  private readonly orders = new Map<string, Payment[]>();
  private readonly finished = new RetireQueue();
  private readonly captured = new RetireQueue();
  private seq = 0;

  constructor(private readonly retentionMs: number) {}

  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  /**
   * The active (not deleted) PoS using a beaconId; beacons are global across merchants (seed) and compared
   * case-insensitively, as a scanner lower-cases the QR payload (pos-v10 §15).
   */
  posByBeacon(beaconId: string): Pos | undefined {
    return this.beacons.get(beaconId.toLowerCase());
  }

  /** The active PoS with this merchantPosId for an integrator and merchant. */
  posByMerchantPosId(owner: Owner, merchantPosId: string): Pos | undefined {
    return this.merchantPosIds.get(ownerKey(owner, merchantPosId));
  }

  addPos(pos: Pos): void {
    this.poses.set(pos.posId, pos);
    this.beacons.set(pos.beaconId.toLowerCase(), pos);
    this.merchantPosIds.set(ownerKey(pos.owner, pos.merchantPosId), pos);
  }

  /** Marks a PoS deleted and frees its beaconId and merchantPosId. */
  deletePos(pos: Pos): void {
    pos.deleted = true;
    pos.checkin = null;
    this.checkins.delete(pos);
    this.beacons.delete(pos.beaconId.toLowerCase());
    this.merchantPosIds.delete(ownerKey(pos.owner, pos.merchantPosId));
    if (pos.payments.size === 0) this.poses.delete(pos.posId);
  }

  addPayment(p: Payment): void {
    this.payments.set(p.paymentId, p);
    this.live.add(p);
    p.pos.payments.add(p);
    const key = ownerKey(p.owner, p.orderId);
    const list = this.orders.get(key);
    if (list) list.push(p);
    else this.orders.set(key, [p]);
  }

  /** Payments of an integrator and merchant with this orderId, oldest first. */
  paymentsByOrder(owner: Owner, orderId: string): readonly Payment[] {
    return this.orders.get(ownerKey(owner, orderId)) ?? [];
  }

  /** A payment reached a final state other than Captured. */
  retire(p: Payment, at: number): void {
    this.live.delete(p);
    this.finished.push({ payment: p, purgeAt: at + this.retentionMs });
  }

  /** A payment was captured: it stays refundable for 90 days (pos-v10 §8). */
  retireCaptured(p: Payment, at: number): void {
    this.live.delete(p);
    this.captured.push({
      payment: p,
      purgeAt: at + Math.max(this.retentionMs, REFUND_MAX_AGE_MS + 24 * 3600_000),
    });
  }

  /** Drops retired payments (and their refunds) whose retention ran out. */
  purge(now: number): void {
    for (const p of this.finished.due(now)) this.drop(p);
    for (const p of this.captured.due(now)) this.drop(p);
  }

  private drop(p: Payment): void {
    this.payments.delete(p.paymentId);
    for (const r of p.refunds) {
      this.refunds.delete(r.refundId);
      this.liveRefunds.delete(r);
    }
    p.pos.payments.delete(p);
    if (p.pos.deleted && p.pos.payments.size === 0) this.poses.delete(p.pos.posId);
    const key = ownerKey(p.owner, p.orderId);
    const list = this.orders.get(key);
    if (list) {
      const rest = list.filter((q) => q !== p);
      if (rest.length === 0) this.orders.delete(key);
      else this.orders.set(key, rest);
    }
  }
}
