import { randomUUID } from "node:crypto";
import { amountToJson, formatAmount, type Minor } from "../../core/money.js";
import type { EmuClock, Ledger, SimUser } from "../types.js";
import type { SubsDelivery } from "./delivery.js";
import {
  type Agreement,
  type AgreementStatus,
  at,
  dateOf,
  daysBetween,
  EXECUTION_MINUTE,
  MS_DAY,
  type OneOff,
  type Provider,
  REFUND_WINDOW_MS,
  RESERVATION_LIFE_MS,
  RETRY_MINUTES,
  type SubsMerchant,
  type SubsPayment,
  type SubsRefund,
  type SubsUserState,
  stamp,
} from "./model.js";

/** Agreement callback texts and codes (seed 000 §States, Agreement). */
const AGREEMENT_CODES = {
  accepted: { status: "Accepted", text: "Agreement accepted", code: 0 },
  rejected: { status: "Rejected", text: "Agreement rejected by user", code: 40000 },
  expired: { status: "Expired", text: "Pending agreement expired", code: 40001 },
  user: { status: "Canceled", text: "Agreement canceled by user", code: 40002 },
  merchant: { status: "Canceled", text: "Agreement canceled by merchant", code: 40003 },
  system: { status: "Canceled", text: "Agreement canceled by system", code: 40004 },
} as const;

/** Payment status texts by code (seed 000 §States, Subscription payment and One-off payment). */
export const PAYMENT_TEXTS: Record<number, string | null> = {
  0: null,
  50000: null,
  50001: "Rejected by user.",
  50002: "Declined by merchant.",
  50003: "Declined by system: Agreement is not Active state.",
  50004: "Declined by system: Found duplicates for same DueDate and AgreementId or ExternalId.",
  50005: "Declined by system: Agreement was canceled.",
  50006: "Declined by system.",
  50008: "Expired by system.",
  50009: "Declined due to user status.",
  50010: "Agreement does not exist.",
  50011: "Due date of the payment must be at least 1 day in the future.",
  50012: "Due date must be no more than 126 days in the future.",
  50013: "Automatic reservation failed. User action is needed.",
};

/** Refund status texts by code (seed 000 §States, Refund). */
export const REFUND_TEXTS: Record<number, string | null> = {
  0: null,
  60001: "Payment is fully refunded.",
  60002: "The total sum of previous Refunds cannot exceed the original payment amount.",
  60003: "Payment was not found.",
  60004: "Payment cannot be refunded.",
  60005: "Refund was declined by system.",
  60006: "Cannot refund payments that are older than 30 days.",
  60007: "Cannot refund instantly transferred payments.",
};

/** Largest subscription payment per country, minor units (seed 000 §Limits). */
const MAX_AMOUNT = { DK: 6_000_000, FI: 200_000 } as const;

/**
 * Attachment V1 (`invoice`): its due_date must lie between today and 400 days ahead, else the request is
 * declined (seed 000); the emulator declines such a payment with the core-system code 50006.
 */
function invoiceDueDateOk(invoice: unknown, today: string): boolean {
  if (typeof invoice !== "object" || invoice === null) return true;
  const due = (invoice as Record<string, unknown>).due_date;
  if (typeof due !== "string" || Number.isNaN(Date.parse(`${due}T00:00:00Z`))) return false;
  const ahead = daysBetween(today, due);
  return ahead >= 0 && ahead <= 400;
}

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
 * refunds, with every transition of seed 000 and the time rules run on each clock tick.
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

  constructor(private readonly d: SubsStateDeps) {}

  private now(): number {
    return this.d.clock.now();
  }

  userState(phone: string): SubsUserState {
    let s = this.users.get(phone);
    if (s === undefined) {
      const features = this.d.findUser(phone)?.features ?? [];
      s = { cardFails: features.includes("insufficientFunds"), blocked: false, instantTransfer: false };
      this.users.set(phone, s);
    }
    return s;
  }

  merchantOf(providerId: string): SubsMerchant | undefined {
    const p = this.providers.get(providerId);
    return p === undefined ? undefined : this.merchants.get(p.merchantId);
  }

  // ---- agreements -------------------------------------------------------------------------------------

  private agreementCallback(a: Agreement, which: keyof typeof AGREEMENT_CODES): void {
    const c = AGREEMENT_CODES[which];
    const url = which === "accepted" ? a.links.success : a.links.cancel;
    this.d.delivery.send(
      "agreement",
      url,
      {
        agreement_id: a.id,
        external_id: a.externalId,
        status: c.status,
        status_text: c.text,
        status_code: c.code,
        timestamp: stamp(this.now()),
      },
      a.providerId,
    );
  }

  private setAgreement(a: Agreement, status: AgreementStatus, which: keyof typeof AGREEMENT_CODES): void {
    a.status = status;
    this.agreementCallback(a, which);
  }

  /** User accepts a Pending agreement (with a combined one-off: activated only when it is reserved). */
  acceptAgreement(a: Agreement, phone: string): void {
    if (a.status !== "Pending") throw new SubsConflict(`agreement is ${a.status}, not Pending`);
    const user = this.userState(phone);
    const oneOff = a.oneOffId === null ? undefined : this.oneOffs.get(a.oneOffId);
    if (oneOff && oneOff.status === "Requested") {
      if (user.cardFails)
        throw new SubsConflict("the card was declined: the initial one-off amount was not reserved");
      a.phone = phone;
      this.setAgreement(a, "Accepted", "accepted");
      this.reserveOneOff(oneOff, user);
      return;
    }
    a.phone = phone;
    this.setAgreement(a, "Accepted", "accepted");
  }

  rejectAgreement(a: Agreement): void {
    if (a.status !== "Pending") throw new SubsConflict(`agreement is ${a.status}, not Pending`);
    this.setAgreement(a, "Rejected", "rejected");
    const oneOff = a.oneOffId === null ? undefined : this.oneOffs.get(a.oneOffId);
    if (oneOff && oneOff.status === "Requested") this.finishOneOff(oneOff, "Rejected", 50001, true);
  }

  /** Cancels an Accepted agreement: by the user (refused while a one-off is reserved), merchant or system. */
  cancelAgreement(a: Agreement, by: "user" | "merchant" | "system"): void {
    if (a.status !== "Accepted") throw new SubsConflict(`agreement is ${a.status}, not Active`);
    const reserved = [...this.oneOffs.values()].filter(
      (o) => o.agreementId === a.id && (o.status === "Reserved" || o.status === "Requested"),
    );
    if (by === "user" && reserved.some((o) => o.status === "Reserved"))
      throw new SubsConflict("an agreement with a reserved payment can be cancelled by the merchant only");
    this.setAgreement(a, "Canceled", by);
    for (const o of reserved) this.cancelOneOff(o);
    for (const p of this.payments.values()) {
      if (p.agreementId !== a.id) continue;
      if (p.status === "Pending" || p.status === "Suspended" || p.status === "Received")
        this.finishPayment(p, by === "user" ? "Rejected" : "Declined", 50005);
    }
  }

  // ---- subscription payments --------------------------------------------------------------------------

  private paymentEvent(p: SubsPayment, code: number, paymentDate: string): void {
    const a = this.agreements.get(p.agreementId);
    this.d.delivery.enqueue({
      providerId: p.providerId,
      body: {
        agreement_id: p.agreementId,
        payment_id: p.id,
        amount: amountToJson(p.amount),
        currency: a?.currency ?? "DKK",
        payment_date: paymentDate,
        status: p.status,
        status_text: PAYMENT_TEXTS[code] ?? null,
        status_code: code,
        external_id: p.externalId,
        payment_type: "Regular",
      },
    });
  }

  private finishPayment(
    p: SubsPayment,
    status: "Declined" | "Rejected" | "Failed" | "Executed",
    code: number,
  ): void {
    p.status = status;
    p.nextRunAt = null;
    this.paymentEvent(p, code, dateOf(this.now()));
  }

  /** Accepts a payment for asynchronous validation (the 202 of the payment-request call). */
  receivePayment(p: SubsPayment): void {
    this.payments.set(p.id, p);
    this.validation.push(p.id);
  }

  /** Validation right after receipt (seed 000: 50003, 50004, 50006, 50009-50012). */
  private validate(p: SubsPayment): void {
    const code = this.validationCode(p);
    if (code !== null) {
      this.finishPayment(p, "Declined", code);
      return;
    }
    p.status = "Pending";
    p.nextRunAt = at(p.dueDate, EXECUTION_MINUTE);
  }

  private validationCode(p: SubsPayment): number | null {
    const a = this.agreements.get(p.agreementId);
    const today = dateOf(p.receivedAt);
    if (a === undefined || a.providerId !== p.providerId) return 50010;
    if (a.status !== "Accepted") return 50003;
    const ahead = daysBetween(today, p.dueDate);
    if (ahead < 1) return 50011;
    if (ahead > (p.deprecated ? 32 : 126)) return 50012;
    const duplicate = [...this.payments.values()].some(
      (q) =>
        q !== p &&
        q.agreementId === p.agreementId &&
        q.dueDate === p.dueDate &&
        q.externalId === p.externalId &&
        (q.status === "Pending" || q.status === "Suspended" || q.status === "Executed"),
    );
    if (duplicate) return 50004;
    if (a.phone !== null && this.userState(a.phone).blocked) return 50009;
    if (p.amount > MAX_AMOUNT[a.country] || !invoiceDueDateOk(p.invoice, today)) return 50006;
    if (this.systemDeclines.payments > 0) {
      this.systemDeclines.payments -= 1;
      return 50006;
    }
    return null;
  }

  /** User rejects a Pending payment in the 8-to-1 days window before its due date (50001). */
  rejectPayment(p: SubsPayment): void {
    this.requireVisible(p);
    this.finishPayment(p, "Rejected", 50001);
  }

  /** Merchant declines (deletes) a Pending payment request (50002). */
  declinePayment(p: SubsPayment): void {
    if (p.status !== "Pending" && p.status !== "Received")
      throw new SubsConflict(`payment is ${p.status}, not Pending`);
    this.finishPayment(p, "Declined", 50002);
  }

  private requireVisible(p: SubsPayment): void {
    if (p.status !== "Pending") throw new SubsConflict(`payment is ${p.status}, not Pending`);
    const ahead = daysBetween(dateOf(this.now()), p.dueDate);
    if (ahead < 1 || ahead > 8)
      throw new SubsConflict("the user sees a Pending payment 8 to 1 days before its due date");
  }

  /** Decrease of a Pending payment's amount; compared with the original amount only (seed 000 rule 1). */
  changeAmount(p: SubsPayment, amount: Minor): void {
    if (p.status !== "Pending" && p.status !== "Received")
      throw new SubsConflict(`payment is ${p.status}: only a Pending payment can be changed`);
    if (amount > p.originalAmount) throw new SubsConflict("the amount can only be decreased");
    p.amount = amount;
  }

  /** The run times of a failing payment after `from`: 06:00 … 22:30 on the due date and each grace day. */
  private nextRetry(p: SubsPayment, from: number): number | null {
    const days = Math.max(1, p.graceDays);
    for (let day = 0; day < days + (p.graceDays > 0 ? 1 : 0); day++) {
      const date = dateOf(at(p.dueDate, 0) + day * MS_DAY);
      for (const m of RETRY_MINUTES) {
        const t = at(date, m);
        if (t > from) return t;
      }
    }
    return null;
  }

  /** End of the last retry day (23:59 of the due date or of the last grace day). */
  private failAt(p: SubsPayment): number {
    return at(p.dueDate, 23 * 60 + 59) + p.graceDays * MS_DAY;
  }

  private run(p: SubsPayment, t: number): void {
    const a = this.agreements.get(p.agreementId);
    const user = a?.phone ? this.userState(a.phone) : undefined;
    if (user !== undefined && !user.cardFails) {
      p.status = "Executed";
      p.executedAt = t;
      p.nextRunAt = null;
      p.instantTransfer = user.instantTransfer;
      const m = this.merchantOf(p.providerId);
      this.d.ledger.record({
        interface: "subscriptions",
        id: p.id,
        paymentId: null,
        orderId: p.externalId,
        kind: "paid",
        amount: p.amount,
        merchant: m?.vat,
        point: p.providerId,
      });
      this.paymentEvent(p, 0, dateOf(t));
      return;
    }
    p.status = "Suspended";
    const next = this.nextRetry(p, t);
    p.nextRunAt = next ?? this.failAt(p);
  }

  // ---- one-off payments -------------------------------------------------------------------------------

  private oneOffBody(o: OneOff, code: number, status: string): Record<string, unknown> {
    const a = this.agreements.get(o.agreementId);
    return {
      agreement_id: o.agreementId,
      payment_id: o.id,
      amount: amountToJson(o.amount),
      currency: a?.currency ?? "DKK",
      payment_date: dateOf(this.now()),
      status,
      status_text: code === 0 ? "Payment successfully reserved." : (PAYMENT_TEXTS[code] ?? null),
      status_code: code,
      external_id: o.externalId,
      payment_type: "OneOff",
    };
  }

  /** One-off callbacks go out at once (Reserved, Rejected, 50013) as a one-element array. */
  private oneOffNow(o: OneOff, code: number, status: string): void {
    const p = this.providers.get(o.providerId);
    if (p?.callbackUrl)
      this.d.delivery.send("oneoff", p.callbackUrl, [this.oneOffBody(o, code, status)], o.providerId);
  }

  /** A one-off requested on an Active agreement: with auto_reserve the emulator tries at once. */
  requestOneOff(o: OneOff): void {
    this.oneOffs.set(o.id, o);
    const a = this.agreements.get(o.agreementId);
    if (!o.autoReserve || a?.status !== "Accepted" || a.phone === null) return;
    const user = this.userState(a.phone);
    if (user.cardFails) this.oneOffNow(o, 50013, "Requested");
    else this.reserveOneOff(o, user);
  }

  private reserveOneOff(o: OneOff, user: SubsUserState): void {
    o.status = "Reserved";
    o.expiresAt = this.now() + RESERVATION_LIFE_MS;
    o.instantTransfer = user.instantTransfer;
    this.ledgerOneOff(o, "reserved", o.amount);
    this.oneOffNow(o, 0, "Reserved");
  }

  private ledgerOneOff(
    o: OneOff,
    kind: "reserved" | "captured" | "cancelled" | "expired",
    amount: Minor,
  ): void {
    this.d.ledger.record({
      interface: "subscriptions",
      id: o.id,
      paymentId: null,
      orderId: o.externalId,
      kind,
      amount,
      merchant: this.merchantOf(o.providerId)?.vat,
      point: o.providerId,
    });
  }

  /** User accepts a Requested one-off (its agreement must be Active). */
  acceptOneOff(o: OneOff): void {
    if (o.status !== "Requested") throw new SubsConflict(`one-off payment is ${o.status}, not Requested`);
    const a = this.agreements.get(o.agreementId);
    if (a?.status !== "Accepted" || a.phone === null)
      throw new SubsConflict("accept the agreement itself: this one-off belongs to a Pending agreement");
    const user = this.userState(a.phone);
    if (user.cardFails) throw new SubsConflict("the card was declined");
    this.reserveOneOff(o, user);
  }

  rejectOneOff(o: OneOff): void {
    if (o.status !== "Requested") throw new SubsConflict(`one-off payment is ${o.status}, not Requested`);
    this.finishOneOff(o, "Rejected", 50001, true);
  }

  private finishOneOff(o: OneOff, status: "Rejected" | "Expired", code: number, now: boolean): void {
    const wasReserved = o.status === "Reserved";
    o.status = status;
    if (wasReserved) this.ledgerOneOff(o, "expired", o.amount);
    if (now) this.oneOffNow(o, code, status);
    else this.d.delivery.enqueue({ providerId: o.providerId, body: this.oneOffBody(o, code, status) });
  }

  /** Merchant capture: once, of a Reserved one-off, not above the reserved amount. */
  captureOneOff(o: OneOff, amount: Minor | null): void {
    if (o.status === "Captured") throw new SubsConflict("the one-off payment is already captured");
    if (o.status !== "Reserved") throw new SubsConflict(`one-off payment is ${o.status}, not Reserved`);
    const take = amount ?? o.amount;
    if (take > o.amount) throw new SubsConflict("capture above the reserved amount");
    if (take === 0) throw new SubsConflict("capture amount must be above 0.00");
    o.status = "Captured";
    o.captured = take;
    o.executedAt = this.now();
    this.ledgerOneOff(o, "captured", take);
  }

  /** Merchant cancel of a one-off not yet captured nor expired. */
  cancelOneOff(o: OneOff): void {
    if (o.status !== "Requested" && o.status !== "Reserved")
      throw new SubsConflict(
        `one-off payment is ${o.status}: only a Requested or Reserved one can be cancelled`,
      );
    if (o.status === "Reserved") this.ledgerOneOff(o, "cancelled", o.amount);
    o.status = "Cancelled";
  }

  // ---- refunds ----------------------------------------------------------------------------------------

  /** Processes a refund right after the request; returns the decision (callback sent). */
  refund(r: SubsRefund, providerId: string): void {
    this.refunds.set(r.id, r);
    const code = this.refundCode(r, providerId);
    r.status = code === 0 ? "Issued" : "Declined";
    r.statusCode = code;
    const a = this.agreements.get(r.agreementId);
    this.d.delivery.send(
      "refund",
      r.callbackUrl,
      {
        refund_id: r.id,
        agreement_id: r.agreementId,
        payment_id: r.paymentId,
        amount: formatAmount(r.amount),
        currency: a?.currency ?? "DKK",
        status: r.status,
        status_text: REFUND_TEXTS[code] ?? null,
        status_code: code,
        external_id: r.externalId,
      },
      providerId,
    );
  }

  private refundCode(r: SubsRefund, providerId: string): number {
    const p = this.payments.get(r.paymentId);
    const o = this.oneOffs.get(r.paymentId);
    const target =
      p && p.agreementId === r.agreementId && p.providerId === providerId
        ? {
            paid: p.status === "Executed" ? p.amount : null,
            at: p.executedAt,
            instant: p.instantTransfer,
            rec: p,
          }
        : o && o.agreementId === r.agreementId && o.providerId === providerId
          ? {
              paid: o.status === "Captured" ? o.captured : null,
              at: o.executedAt,
              instant: o.instantTransfer,
              rec: o,
            }
          : null;
    if (target === null) return 60003;
    if (target.paid === null || target.at === null) return 60004;
    if (target.instant) return 60007;
    if (this.now() - target.at > REFUND_WINDOW_MS) return 60006;
    const left = target.paid - target.rec.refunded;
    if (left <= 0) return 60001;
    const amount = r.amount === 0 ? left : r.amount;
    if (amount > left) return 60002;
    if (this.systemDeclines.refunds > 0) {
      this.systemDeclines.refunds -= 1;
      return 60005;
    }
    r.amount = amount;
    target.rec.refunded += amount;
    this.d.ledger.record({
      interface: "subscriptions",
      id: r.id,
      paymentId: r.paymentId,
      orderId: r.externalId ?? r.id,
      kind: "refunded",
      amount,
      merchant: this.merchantOf(providerId)?.vat,
      point: providerId,
    });
    return 0;
  }

  // ---- time -------------------------------------------------------------------------------------------

  /** Runs every rule that became due by `now`, in time order per record. */
  tick(now: number): void {
    const queued = this.validation;
    this.validation = [];
    for (const id of queued) {
      const p = this.payments.get(id);
      if (p?.status === "Received") this.validate(p);
    }
    for (const a of this.agreements.values()) {
      if (a.status === "Pending" && a.expiresAt <= now) {
        this.setAgreement(a, "Expired", "expired");
        const o = a.oneOffId === null ? undefined : this.oneOffs.get(a.oneOffId);
        if (o && o.status === "Requested") this.finishOneOff(o, "Expired", 50008, false);
      }
    }
    for (const p of this.payments.values()) {
      while (
        (p.status === "Pending" || p.status === "Suspended") &&
        p.nextRunAt !== null &&
        p.nextRunAt <= now
      ) {
        const t = p.nextRunAt;
        if (p.status === "Suspended" && t >= this.failAt(p)) {
          p.status = "Failed";
          p.nextRunAt = null;
          this.paymentEvent(p, 50000, dateOf(t));
          break;
        }
        this.run(p, t);
      }
    }
    for (const o of this.oneOffs.values()) {
      if ((o.status === "Requested" || o.status === "Reserved") && o.expiresAt <= now)
        this.finishOneOff(o, "Expired", 50008, false);
    }
    this.d.delivery.tick(now);
  }

  newId(): string {
    return randomUUID();
  }
}
