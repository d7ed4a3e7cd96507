import { randomUUID } from "node:crypto";
import type { HttpsCallbackClient } from "../invoices/https.js";
import type { EmuClock, Ledger, LedgerKind, SimUser } from "../types.js";
import { canonical } from "../v10/body.js";
import type { TestKey } from "./cards.js";
import type { OnlineMerchant, OnlinePayment, PaymentOp, PspClient } from "./model.js";
import { PspCallbacks } from "./notify.js";
import { applyOperation, remaining, settleStatus } from "./operations.js";
import { userAccepts } from "./simulate.js";
import {
  alphaCurrency,
  conflict,
  dateTime,
  httpsUrl,
  int,
  invalid,
  notFound,
  OnlineError,
  only,
  parseInitiate,
  parseMerchant,
  str,
  UUID,
} from "./validate.js";

export interface OnlineDeps {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
  https: HttpsCallbackClient;
  /** The card-data test key (made on first use: RSA generation costs ~100 ms). */
  key(): TestKey;
  keyId: number;
}

/** Checkout and 3-D Secure payments get 15 more minutes after validUntil (seed §initiate body). */
const CHECKOUT_GRACE_MS = 15 * 60_000;

/**
 * The online-payment interface of payment service providers (seed 002 §Online payments): merchants,
 * payments, the user's accept (simulated: simulate.ts), card data and failure callbacks to the PSP
 * (notify.ts), authorization attempts, captures, cancels and refunds (several, partial, idempotent by their
 * `*Identifier`; amounts: operations.ts), reservation expiry, and the ledger.
 */
export class OnlineService {
  readonly clients = new Map<string, PspClient>();
  private readonly merchants = new Map<string, OnlineMerchant>();
  private readonly payments = new Map<string, OnlinePayment>();
  readonly notify: PspCallbacks;
  private readonly unsubscribe: () => void;
  private readonly unschedule: () => void;

  constructor(private readonly d: OnlineDeps) {
    this.notify = new PspCallbacks(d);
    this.unsubscribe = d.clock.onTick((now) => this.tick(now));
    this.unschedule = d.clock.schedule(() => this.nextDue());
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.unschedule();
    await this.notify.drain();
  }

  createMerchant(clientId: string, body: Record<string, unknown>): OnlineMerchant {
    const input = parseMerchant(body);
    for (const m of this.merchants.values())
      if (m.clientId === clientId && !m.deleted && m.externalId === input.externalId)
        conflict("DuplicateExternalId", "a merchant with this externalId exists");
    const m: OnlineMerchant = { ...input, merchantId: randomUUID(), clientId, deleted: false };
    this.merchants.set(m.merchantId, m);
    return m;
  }

  merchant(clientId: string, id: string): OnlineMerchant {
    const m = this.merchants.get(id.toLowerCase());
    if (m === undefined || m.clientId !== clientId || m.deleted) notFound("merchant");
    return m;
  }

  merchantList(clientId: string): OnlineMerchant[] {
    return [...this.merchants.values()].filter((m) => m.clientId === clientId && !m.deleted);
  }

  deleteMerchant(clientId: string, id: string): void {
    this.merchant(clientId, id).deleted = true;
  }

  initiate(clientId: string, body: Record<string, unknown>): OnlinePayment {
    const input = parseInitiate(body, this.d.clock.now());
    const m = this.merchants.get(input.merchantId);
    if (m === undefined || m.clientId !== clientId || m.deleted)
      invalid("merchantId", "is not an active merchant of this client");
    if (input.publicKeyId !== this.d.keyId) invalid("publicKeyId", "is not a known card-data key");
    const p: OnlinePayment = {
      paymentId: randomUUID(),
      clientId,
      input,
      status: "Initiated",
      failureReason: null,
      authorizationAttemptId: null,
      succeededAttemptId: null,
      cardType: null,
      reservationExpireTimestamp: null,
      redirectFromServiceUrl: input.redirectFromServiceUrl,
      authorized: 0,
      captured: 0,
      cancelled: 0,
      refunded: 0,
      expired: 0,
      idempotency: new Map(),
      operations: [],
    };
    this.payments.set(p.paymentId, p);
    return p;
  }

  payment(clientId: string | null, id: string): OnlinePayment {
    const p = this.payments.get(id.toLowerCase());
    if (p === undefined || (clientId !== null && p.clientId !== clientId)) notFound("payment");
    return p;
  }

  private record(p: OnlinePayment, kind: LedgerKind, id: string, amount: number): void {
    const m = this.merchants.get(p.input.merchantId);
    this.d.ledger.record({
      interface: "online",
      id,
      paymentId: id === p.paymentId ? null : p.paymentId,
      orderId: p.input.merchantOrderId,
      kind,
      amount,
      currency: alphaCurrency(p.input.currencyCode),
      ...(m ? { merchant: m.vatNumber } : {}),
      point: p.input.merchantId,
    });
  }

  private deadline(p: OnlinePayment): number | null {
    const v = p.input.validUntil;
    return v === null ? null : v + (p.input.isCheckout ? CHECKOUT_GRACE_MS : 0);
  }

  /**
   * The user enters the phone number, picks a card and swipes (seed "Simulate user behavior"). Checks in
   * order: payment still open and within validUntil, app user, minimumServiceUserAge, eligible card,
   * checkout delivery country; then the address (checkout) and the card data are posted to the PSP. A
   * refused step fails the payment and calls failedPaymentCallbackUrl.
   */
  async simulate(paymentId: string, body: Record<string, unknown>) {
    only(body, ["phoneNumber", "lastFourDigits"]);
    const phone = str(body, "phoneNumber", 7, 16);
    const last4 = body.lastFourDigits;
    if (last4 !== undefined && last4 !== null && (typeof last4 !== "string" || !/^\d{4}$/.test(last4)))
      invalid("lastFourDigits", "must be 4 digits or null");
    const p = this.payment(null, paymentId);
    this.tick(this.d.clock.now());
    if (p.status !== "Initiated") conflict("InvalidState", `the payment is ${p.status}`);
    const user = this.d.findUser(phone);
    if (user === undefined) throw new OnlineError(404, "UserNotFound", "no app user has this phone number");
    return userAccepts(
      { notify: this.notify, keyId: this.d.keyId, key: () => this.d.key() },
      p,
      user,
      phone,
      (last4 as string | null | undefined) ?? null,
    );
  }

  /** PATCH authorization attempt: `{succeeded}` from the PSP after it tried the card. */
  async authorizationResult(
    clientId: string,
    paymentId: string,
    attemptId: string,
    body: Record<string, unknown>,
  ): Promise<void> {
    only(body, ["succeeded"]);
    if (typeof body.succeeded !== "boolean") invalid("succeeded", "must be a boolean");
    const p = this.payment(clientId, paymentId);
    if (p.authorizationAttemptId !== attemptId.toLowerCase()) notFound("authorization attempt");
    if (p.status !== "AwaitingAuthorization") conflict("InvalidState", `the payment is ${p.status}`);
    if (!body.succeeded) {
      await this.notify.fail(p, "Failed", "AuthorizationFailed");
      return;
    }
    p.status = "Authorized";
    p.succeededAttemptId = attemptId.toLowerCase();
    p.authorized = p.input.amount;
    this.record(p, "reserved", p.paymentId, p.authorized);
  }

  /** Update payment: reservationExpireTimestamp (authorized only) and redirectFromServiceUrl. */
  update(clientId: string, paymentId: string, body: Record<string, unknown>): void {
    only(body, ["reservationExpireTimestamp", "redirectFromServiceUrl"]);
    const p = this.payment(clientId, paymentId);
    const expire = dateTime(body, "reservationExpireTimestamp", false);
    const redirect = httpsUrl(body, "redirectFromServiceUrl", false);
    if (expire !== null) {
      if (p.status !== "Authorized")
        conflict("InvalidState", `reservationExpireTimestamp needs an authorized payment, it is ${p.status}`);
      if (expire <= this.d.clock.now()) invalid("reservationExpireTimestamp", "must be in the future");
      p.reservationExpireTimestamp = expire;
    }
    if (redirect !== null) p.redirectFromServiceUrl = redirect;
  }

  /** Capture, cancel and refund: validation, idempotency by the `*Identifier`, amounts, ledger. */
  operate(
    clientId: string,
    paymentId: string,
    op: PaymentOp,
    body: Record<string, unknown>,
  ): { id: string; replay: boolean } {
    const idKey = `${op}Identifier`;
    only(
      body,
      op === "capture"
        ? ["amount", idKey, "timestamp", "authorizationAttemptId"]
        : ["amount", idKey, "timestamp"],
    );
    const amount = int(body, "amount", 1, Number.MAX_SAFE_INTEGER);
    const identifier = str(body, idKey, 1, 100);
    dateTime(body, "timestamp", true);
    const attempt = body.authorizationAttemptId;
    if (attempt !== undefined && attempt !== null && (typeof attempt !== "string" || !UUID.test(attempt)))
      invalid("authorizationAttemptId", "must be a uuid or null");
    const p = this.payment(clientId, paymentId);
    this.tick(this.d.clock.now());
    const seen = p.idempotency.get(`${op}|${identifier}`);
    const request = canonical(body);
    if (seen !== undefined) {
      if (seen.request !== request) conflict("IdempotencyConflict", `${idKey} was used with another request`);
      return { id: seen.id, replay: true };
    }
    const id = randomUUID();
    applyOperation(p, op, id, amount, attempt, (kind, opId, opAmount) =>
      this.record(p, kind, opId, opAmount),
    );
    p.idempotency.set(`${op}|${identifier}`, { request, id });
    p.operations.push({ type: op, id, amount, identifier, timestamp: String(body.timestamp) });
    return { id, replay: false };
  }

  /** validUntil and reservation expiry. */
  /** The earliest expiry the tick will run (the clock stops there within an advance); null when none. */
  private nextDue(): number | null {
    let min: number | null = null;
    for (const p of this.payments.values()) {
      const deadline = this.deadline(p);
      // An Initiated payment expires once its deadline has passed (1 ms later).
      const t =
        p.status === "Initiated" && deadline !== null
          ? deadline + 1
          : p.status === "Authorized"
            ? p.reservationExpireTimestamp
            : null;
      if (t !== null && (min === null || t < min)) min = t;
    }
    return min;
  }

  private tick(now: number): void {
    for (const p of this.payments.values()) {
      const deadline = this.deadline(p);
      if (p.status === "Initiated" && deadline !== null && now > deadline)
        void this.notify.fail(p, "Expired", "Expired");
      if (
        p.status === "Authorized" &&
        p.reservationExpireTimestamp !== null &&
        now >= p.reservationExpireTimestamp
      ) {
        const left = remaining(p);
        p.expired += left;
        this.record(p, "expired", p.paymentId, left);
        settleStatus(p);
      }
    }
  }
}
