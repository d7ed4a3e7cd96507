import { randomUUID } from "node:crypto";
import type { HttpsCallbackClient } from "../invoices/https.js";
import type { EmuClock, Ledger, LedgerKind, SimUser } from "../types.js";
import { canonical } from "../v10/body.js";
import { cardsOf, chooseCard, DEFAULT_AGE, encryptCard, maskPan, type TestKey, testToken } from "./cards.js";
import {
  conflict,
  dateTime,
  httpsUrl,
  type InitiateInput,
  int,
  invalid,
  type MerchantInput,
  notFound,
  OnlineError,
  only,
  parseInitiate,
  parseMerchant,
  str,
  UUID,
} from "./validate.js";

/** A payment service provider's API client (`x-gateway-client-id` / `-secret`). */
export interface PspClient {
  clientId: string;
  clientSecret: string;
  integratorName: string;
  clientName: string;
  active: boolean;
}

export interface OnlineMerchant extends MerchantInput {
  merchantId: string;
  clientId: string;
  deleted: boolean;
}

/**
 * Payment status (seed: "states of the online payment: not shown"; this emulator's): Initiated → (user
 * accepts, card data sent) AwaitingAuthorization → Authorized | Failed; Initiated → Expired (validUntil);
 * Initiated/AwaitingAuthorization → Cancelled; Authorized → Captured (nothing left to capture, something
 * captured) | Cancelled (all cancelled) | ReservationExpired (reservationExpireTimestamp passed).
 */
export type OnlineStatus =
  | "Initiated"
  | "AwaitingAuthorization"
  | "Authorized"
  | "Captured"
  | "Cancelled"
  | "Failed"
  | "Expired"
  | "ReservationExpired";

type Op = "capture" | "cancel" | "refund";

export interface OnlinePayment {
  paymentId: string;
  clientId: string;
  input: InitiateInput;
  status: OnlineStatus;
  failureReason: string | null;
  authorizationAttemptId: string | null;
  succeededAttemptId: string | null;
  cardType: string | null;
  reservationExpireTimestamp: number | null;
  redirectFromServiceUrl: string;
  authorized: number;
  captured: number;
  cancelled: number;
  refunded: number;
  expired: number;
  /** `*Identifier` → {canonical request, answered id}, per operation. */
  idempotency: Map<string, { request: string; id: string }>;
  operations: { type: Op; id: string; amount: number; identifier: string; timestamp: string }[];
}

export interface OnlineCallbackRecord {
  kind: "cardData" | "failedPayment" | "address";
  url: string;
  paymentId: string;
  status: number | null;
  at: number;
}

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
 * payments, the user's accept (simulated), card data to the PSP, authorization attempts, captures, cancels
 * and refunds (several, partial, idempotent by their `*Identifier`), reservation expiry, and the ledger.
 */
export class OnlineService {
  readonly clients = new Map<string, PspClient>();
  private readonly merchants = new Map<string, OnlineMerchant>();
  private readonly payments = new Map<string, OnlinePayment>();
  readonly callbacks: OnlineCallbackRecord[] = [];
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly d: OnlineDeps) {
    this.unsubscribe = d.clock.onTick((now) => this.tick(now));
  }

  async close(): Promise<void> {
    this.unsubscribe();
    await Promise.all([...this.inflight]);
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
      ...(m ? { merchant: m.vatNumber } : {}),
      point: p.input.merchantId,
    });
  }

  private remaining(p: OnlinePayment): number {
    return p.authorized - p.captured - p.cancelled - p.expired;
  }

  private settleStatus(p: OnlinePayment): void {
    if (p.status !== "Authorized" || this.remaining(p) > 0) return;
    p.status = p.captured > 0 ? "Captured" : p.expired > 0 ? "ReservationExpired" : "Cancelled";
  }

  private notifyFailed(p: OnlinePayment, reason: string): Promise<void> {
    const url = p.input.failedPaymentCallbackUrl;
    if (url === null) return Promise.resolve();
    return this.send("failedPayment", url, p, {
      paymentId: p.paymentId,
      pspReferenceId: p.input.pspReferenceId,
      merchantId: p.input.merchantId,
      reason,
      timestamp: new Date(this.d.clock.now()).toISOString(),
    }).then(() => undefined);
  }

  private fail(p: OnlinePayment, status: "Failed" | "Expired", reason: string): Promise<void> {
    p.status = status;
    p.failureReason = reason;
    return this.notifyFailed(p, reason);
  }

  private send(
    kind: OnlineCallbackRecord["kind"],
    url: string,
    p: OnlinePayment,
    body: unknown,
  ): Promise<number | null> {
    const run = this.d.https.post(url, body).then((status) => {
      this.callbacks.push({ kind, url, paymentId: p.paymentId, status, at: this.d.clock.now() });
      return status;
    });
    this.inflight.add(run);
    run.finally(() => this.inflight.delete(run));
    return run;
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
    const outcome = (status: OnlineStatus, extra: Record<string, unknown> = {}) => ({
      paymentId: p.paymentId,
      status,
      ...extra,
    });
    const min = p.input.minimumServiceUserAge;
    if (min !== null && (user.age ?? DEFAULT_AGE) < min) {
      await this.fail(p, "Failed", "UserTooYoung");
      return outcome("Failed", { reason: "UserTooYoung" });
    }
    const chosen = chooseCard(
      cardsOf(user),
      p.input.allowedCardTypes.map((t) => t.name),
      (last4 as string | null | undefined) ?? null,
      p.input.preferInternationalSchemePartOfCobrandedCard,
    );
    if (chosen === null) {
      await this.fail(p, "Failed", "NoEligibleCard");
      return outcome("Failed", { reason: "NoEligibleCard" });
    }
    const country = phone.startsWith("+358") ? "FI" : "DK";
    if (p.input.isCheckout) {
      if (p.input.deliveryLimitedTo.length > 0 && !p.input.deliveryLimitedTo.includes(country)) {
        await this.fail(p, "Failed", "DeliveryCountryNotAllowed");
        return outcome("Failed", { reason: "DeliveryCountryNotAllowed" });
      }
      await this.send("address", p.input.addressCallbackUrl ?? "", p, {
        paymentId: p.paymentId,
        pspReferenceId: p.input.pspReferenceId,
        address: {
          name: "Emulator User",
          addressLines: ["Emulatorvej 2"],
          zipCode: "8000",
          city: "Aarhus",
          countryCode: country,
        },
      });
    }
    const type = p.input.allowedCardTypes.find((t) => t.name === chosen.type);
    const attemptId = randomUUID();
    p.authorizationAttemptId = attemptId;
    p.cardType = chosen.type;
    p.status = "AwaitingAuthorization";
    const common = {
      paymentId: p.paymentId,
      authorizationAttemptId: attemptId,
      pspReferenceId: p.input.pspReferenceId,
      merchantId: p.input.merchantId,
      amount: p.input.amount,
      currencyCode: p.input.currencyCode,
      cardType: chosen.type,
      maskedCardNumber: maskPan(chosen.card.pan),
      cardIssuedInCountryCode: "DK",
    };
    const url = type?.tokenCallbackUrl ?? type?.encryptedPanCallbackUrl ?? "";
    const data =
      type?.tokenCallbackUrl != null
        ? {
            ...common,
            token: {
              value: testToken(),
              expiryMonth: chosen.card.expiryMonth,
              expiryYear: chosen.card.expiryYear,
            },
          }
        : { ...common, publicKeyId: this.d.keyId, encryptedCardData: encryptCard(chosen.card, this.d.key()) };
    const status = await this.send("cardData", url, p, data);
    if (status === null || status < 200 || status >= 300) {
      if (p.status === "AwaitingAuthorization") await this.fail(p, "Failed", "CardDataNotDelivered");
      return outcome("Failed", { reason: "CardDataNotDelivered" });
    }
    return outcome(p.status, { authorizationAttemptId: attemptId, cardType: chosen.type });
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
      await this.fail(p, "Failed", "AuthorizationFailed");
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
    op: Op,
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
    if (op === "capture") {
      if (p.status !== "Authorized") conflict("InvalidState", `a ${p.status} payment cannot be captured`);
      if (typeof attempt === "string" && attempt.toLowerCase() !== p.succeededAttemptId)
        invalid("authorizationAttemptId", "is not the succeeded authorization attempt");
      if (amount > this.remaining(p))
        conflict("AmountTooHigh", `at most ${this.remaining(p)} can be captured`);
      p.captured += amount;
      this.record(p, "captured", id, amount);
    } else if (op === "cancel") {
      if (p.status === "Initiated" || p.status === "AwaitingAuthorization") {
        if (amount > p.input.amount) conflict("AmountTooHigh", `at most ${p.input.amount} can be cancelled`);
        p.status = "Cancelled";
      } else {
        if (p.status !== "Authorized") conflict("InvalidState", `a ${p.status} payment cannot be cancelled`);
        if (amount > this.remaining(p))
          conflict("AmountTooHigh", `at most ${this.remaining(p)} can be cancelled`);
        p.cancelled += amount;
        this.record(p, "cancelled", id, amount);
      }
    } else {
      if (p.captured === 0) conflict("InvalidState", "nothing was captured");
      if (amount > p.captured - p.refunded)
        conflict("AmountTooHigh", `at most ${p.captured - p.refunded} can be refunded`);
      p.refunded += amount;
      this.record(p, "refunded", id, amount);
    }
    this.settleStatus(p);
    p.idempotency.set(`${op}|${identifier}`, { request, id });
    p.operations.push({ type: op, id, amount, identifier, timestamp: String(body.timestamp) });
    return { id, replay: false };
  }

  /** validUntil and reservation expiry. */
  private tick(now: number): void {
    for (const p of this.payments.values()) {
      const deadline = this.deadline(p);
      if (p.status === "Initiated" && deadline !== null && now > deadline)
        void this.fail(p, "Expired", "Expired");
      if (
        p.status === "Authorized" &&
        p.reservationExpireTimestamp !== null &&
        now >= p.reservationExpireTimestamp
      ) {
        const left = this.remaining(p);
        p.expired += left;
        this.record(p, "expired", p.paymentId, left);
        this.settleStatus(p);
      }
    }
  }
}

/** The payment as `GET /api/v1/payments/{id}` shows it (an emulator addition for tests). */
export function paymentView(p: OnlinePayment) {
  return {
    paymentId: p.paymentId,
    merchantId: p.input.merchantId,
    pspReferenceId: p.input.pspReferenceId,
    merchantOrderId: p.input.merchantOrderId,
    status: p.status,
    failureReason: p.failureReason,
    amount: p.input.amount,
    currencyCode: p.input.currencyCode,
    autoCapture: p.input.autoCapture,
    cardType: p.cardType,
    authorizationAttemptId: p.authorizationAttemptId,
    validUntil: p.input.validUntil === null ? null : new Date(p.input.validUntil).toISOString(),
    reservationExpireTimestamp:
      p.reservationExpireTimestamp === null ? null : new Date(p.reservationExpireTimestamp).toISOString(),
    redirectFromServiceUrl: p.redirectFromServiceUrl,
    authorizedAmount: p.authorized,
    capturedAmount: p.captured,
    cancelledAmount: p.cancelled,
    refundedAmount: p.refunded,
    expiredAmount: p.expired,
    operations: p.operations,
  };
}

export function merchantView(m: OnlineMerchant) {
  return {
    merchantId: m.merchantId,
    externalId: m.externalId,
    name: m.name,
    billingCurrency: m.billingCurrency,
    countryCode: m.countryCode,
    vatNumber: m.vatNumber,
    merchantCategoryCode: m.merchantCategoryCode,
  };
}
