import { randomUUID } from "node:crypto";
import type { EmuClock, Ledger, SimUser } from "../types.js";
import type { SubsDelivery } from "./delivery.js";
import type {
  Agreement,
  OneOff,
  Provider,
  SubsMerchant,
  SubsPayment,
  SubsRefund,
  SubsUserState,
} from "./model.js";

/** A state conflict of a merchant or user action (answered 409 by the emulator's choice). */
export class SubsConflict extends Error {
  override readonly name = "SubsConflict";
}

export interface SubsStateDeps {
  clock: EmuClock;
  ledger: Ledger;
  delivery: SubsDelivery;
  findUser(phone: string): SimUser | undefined;
}

/**
 * The subscriptions world: merchants, providers, agreements, subscription payments, one-off payments and
 * refunds. The transitions of seed 000 are the flows of agreement-flow.ts, payment-flow.ts, oneoff-flow.ts
 * and refund-flow.ts; the time rules run on each clock tick (tick.ts).
 */
export class SubsState {
  readonly merchants = new Map<string, SubsMerchant>();
  readonly providers = new Map<string, Provider>();
  readonly agreements = new Map<string, Agreement>();
  readonly payments = new Map<string, SubsPayment>();
  readonly oneOffs = new Map<string, OneOff>();
  readonly refunds = new Map<string, SubsRefund>();
  readonly attachments = new Map<string, { body: unknown; pdf: boolean }>();
  private readonly users = new Map<string, SubsUserState>();
  /** Payments waiting for asynchronous validation, in arrival order. */
  private validation: string[] = [];
  /** Counts of upcoming core-system refusals (admin): payments → 50006, refunds → 60005. */
  readonly systemDeclines = { payments: 0, refunds: 0, deprecated500: 0 };

  constructor(readonly deps: SubsStateDeps) {}

  now(): number {
    return this.deps.clock.now();
  }

  userState(phone: string): SubsUserState {
    let s = this.users.get(phone);
    if (s === undefined) {
      const features = this.deps.findUser(phone)?.features ?? [];
      s = { cardFails: features.includes("insufficientFunds"), blocked: false, instantTransfer: false };
      this.users.set(phone, s);
    }
    return s;
  }

  merchantOf(providerId: string): SubsMerchant | undefined {
    const p = this.providers.get(providerId);
    return p === undefined ? undefined : this.merchants.get(p.merchantId);
  }

  /** Queues a received payment for validation on the next tick. */
  queueValidation(paymentId: string): void {
    this.validation.push(paymentId);
  }

  /** Whether payments wait for validation. */
  get validationQueued(): boolean {
    return this.validation.length > 0;
  }

  /** The queued payment ids, emptying the queue. */
  takeValidation(): string[] {
    const queued = this.validation;
    this.validation = [];
    return queued;
  }

  newId(): string {
    return randomUUID();
  }
}
