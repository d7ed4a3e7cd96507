import type { Clock } from "../core/clock.js";
import type { Minor } from "../core/money.js";
import type {
  CheckinObservation,
  PaymentDriver,
  PaymentObservation,
  PaymentRef,
  PaymentState,
  PosIdentity,
  RefundRequest,
  RefundResult,
  StartRequest,
} from "./driver.js";
import { PaymentError } from "./errors.js";

/** What the simulated customer does with a payment issued to them. */
export type CustomerPlan =
  | { action: "accept"; afterMs: number }
  | { action: "reject"; afterMs: number }
  | { action: "ignore" }
  /** Nobody checks in: the payment stays pending (an idle payment waiting for a customer). */
  | { action: "absent" };

export type SimOp = "start" | "capture" | "cancel" | "refund" | "status";

/** `lostResponse`: applied, then the answer is lost; `unavailable`: not applied, ambiguous to the caller. */
export type SimFault = "lostResponse" | "unavailable" | "refuse";

export interface SimPaymentOptions {
  clock: Clock;
  pollDelayMs?: number;
  customer?: (req: StartRequest) => CustomerPlan;
  /** Sets `partialCapturePossible` on reserved payments (default true). */
  partialCapturePossible?: boolean;
}

interface SimPayment {
  ref: PaymentRef;
  amount: Minor;
  key: string;
  createdAt: number;
  plan: CustomerPlan;
  state: PaymentState;
  cancelReason?: "user" | "client" | "service";
  captured: Minor | null;
}

export interface SimLedgerEntry {
  id: string;
  kind: "reserved" | "paid" | "captured" | "cancelled" | "refunded";
  amount: Minor;
}

/**
 * The `sim` PaymentDriver: an in-memory payment service driven by an injected clock, with a scripted
 * customer and one-shot faults per operation. It follows the same contract as the real drivers (idempotent
 * start by key, idempotent capture and cancel, ambiguous errors) and keeps a ledger, so engine tests can
 * assert exactly-once without a network. The HTTP emulator (src/emulator) is the faithful service model.
 */
export class SimPaymentDriver implements PaymentDriver {
  readonly kind = "sim" as const;
  readonly ledger: SimLedgerEntry[] = [];
  /** Every call made, in order, for assertions. */
  readonly calls: { op: SimOp; orderId: string }[] = [];
  private readonly payments = new Map<string, SimPayment>();
  private readonly byKey = new Map<string, SimPayment>();
  /** The latest payment of each order id. */
  private readonly byOrder = new Map<string, SimPayment>();
  /** Payments that may still be pending or issued (the one-active-payment rule). */
  private readonly openPayments = new Set<SimPayment>();
  private readonly faults: { op: SimOp; fault: SimFault }[] = [];
  private seq = 0;
  private checkedIn = false;

  constructor(private readonly opts: SimPaymentOptions) {}

  /** Arms a one-shot fault for the next call of `op`. */
  injectFault(op: SimOp, fault: SimFault): void {
    this.faults.push({ op, fault });
  }

  async open(): Promise<PosIdentity> {
    return { beaconId: "100000000000001", posId: "sim-pos", name: "Simulated unit" };
  }

  async start(req: StartRequest): Promise<PaymentRef> {
    return this.mutate("start", req.orderId, () => {
      const existing = this.byKey.get(req.idempotencyKey);
      if (existing) return existing.ref;
      for (const p of this.openPayments) {
        if (p.state !== "pending" && p.state !== "issued") this.openPayments.delete(p);
      }
      if (this.openPayments.size > 0)
        throw new PaymentError("busy", "a payment is already active on the point of sale");
      const ref: PaymentRef = {
        id: `sim-${++this.seq}`,
        orderId: req.orderId,
        mode: req.mode ?? "reservation",
      };
      this.checkedIn = false;
      const payment: SimPayment = {
        ref,
        amount: req.amount,
        key: req.idempotencyKey,
        createdAt: this.opts.clock.now(),
        plan: this.opts.customer?.(req) ?? { action: "accept", afterMs: 0 },
        state: "pending",
        captured: null,
      };
      this.payments.set(ref.id, payment);
      this.byKey.set(req.idempotencyKey, payment);
      this.byOrder.set(req.orderId, payment);
      this.openPayments.add(payment);
      return ref;
    });
  }

  async status(ref: PaymentRef): Promise<PaymentObservation> {
    return this.mutate("status", ref.orderId, () => this.observe(this.get(ref.id)));
  }

  async lookup(orderId: string): Promise<PaymentObservation | null> {
    const p = this.byOrder.get(orderId);
    return p ? this.observe(p) : null;
  }

  async capture(ref: PaymentRef, amount: Minor): Promise<void> {
    this.mutate("capture", ref.orderId, () => {
      const p = this.advance(this.get(ref.id));
      if (p.state === "captured") {
        if (p.captured === amount) return;
        throw new PaymentError("conflict", "already captured with a different amount");
      }
      if (p.state !== "reserved") throw new PaymentError("conflict", `payment is ${p.state}, not reserved`);
      if (amount > p.amount) throw new PaymentError("invalid", "amount above the reserved amount");
      if (amount < p.amount && this.opts.partialCapturePossible === false) {
        throw new PaymentError("partialCaptureNotPossible", "partial capture not possible");
      }
      p.state = "captured";
      p.captured = amount;
      this.ledger.push({ id: p.ref.id, kind: "captured", amount });
    });
  }

  async cancel(ref: PaymentRef): Promise<void> {
    this.mutate("cancel", ref.orderId, () => {
      const p = this.advance(this.get(ref.id));
      if (p.state === "cancelled" || p.state === "expired") return;
      if (p.state === "captured" || p.state === "paid")
        throw new PaymentError("conflict", `payment is ${p.state}`);
      if (p.state === "reserved") this.ledger.push({ id: p.ref.id, kind: "cancelled", amount: p.amount });
      p.state = "cancelled";
      p.cancelReason = "client";
    });
  }

  async refund(req: RefundRequest): Promise<RefundResult> {
    return this.mutate("refund", req.ref.orderId, () => {
      const p = this.advance(this.get(req.ref.id));
      if (this.ledger.some((e) => e.id === p.ref.id && e.kind === "refunded")) {
        return { refundId: `${p.ref.id}-r`, state: "captured", remainder: 0 };
      }
      if (p.state !== "paid" && p.state !== "captured") throw new PaymentError("refundRefused", "not paid");
      this.ledger.push({ id: p.ref.id, kind: "refunded", amount: req.amount });
      return { refundId: `${p.ref.id}-r`, state: "captured", remainder: 0 };
    });
  }

  async findActive(): Promise<PaymentObservation[]> {
    return [...this.payments.values()]
      .map((p) => this.observe(p))
      .filter((o) => o.state === "pending" || o.state === "issued" || o.state === "reserved");
  }

  /** A customer checks in on the PoS (seen by `checkin()` until the next payment pairs with it). */
  customerChecksIn(): void {
    this.checkedIn = true;
  }

  async checkin(): Promise<CheckinObservation> {
    return { checkedIn: this.checkedIn, pollDelayMs: this.opts.pollDelayMs ?? 1000 };
  }

  async close(): Promise<void> {}

  private mutate<T>(op: SimOp, orderId: string, apply: () => T): T {
    this.calls.push({ op, orderId });
    const i = this.faults.findIndex((f) => f.op === op);
    const fault = i >= 0 ? this.faults.splice(i, 1)[0]?.fault : undefined;
    if (fault === "unavailable") throw new PaymentError("unavailable", `${op}: timeout`, { ambiguous: true });
    if (fault === "refuse") throw new PaymentError("invalid", `${op}: refused`);
    const result = apply();
    if (fault === "lostResponse")
      throw new PaymentError("unavailable", `${op}: connection reset`, { ambiguous: true });
    return result;
  }

  private get(id: string): SimPayment {
    const p = this.payments.get(id);
    if (!p) throw new PaymentError("notFound", `no payment ${id}`);
    return p;
  }

  /** Applies the customer's plan up to the clock's now. */
  private advance(p: SimPayment): SimPayment {
    if (p.state !== "pending" && p.state !== "issued") return p;
    if (p.plan.action === "absent") return p;
    const age = this.opts.clock.now() - p.createdAt;
    if (p.plan.action === "ignore") {
      p.state = "issued";
      return p;
    }
    if (age < p.plan.afterMs) {
      p.state = "issued";
      return p;
    }
    if (p.plan.action === "reject") {
      p.state = "cancelled";
      p.cancelReason = "user";
      return p;
    }
    p.state = p.ref.mode === "payment" ? "paid" : "reserved";
    this.ledger.push({ id: p.ref.id, kind: p.state === "paid" ? "paid" : "reserved", amount: p.amount });
    return p;
  }

  private observe(p: SimPayment): PaymentObservation {
    this.advance(p);
    return {
      ref: p.ref,
      state: p.state,
      ...(p.cancelReason ? { cancelReason: p.cancelReason } : {}),
      amount: p.amount,
      partialCapturePossible: p.state === "reserved" ? this.opts.partialCapturePossible !== false : null,
      pollDelayMs: this.opts.pollDelayMs ?? 1000,
    };
  }
}
