import { randomUUID } from "node:crypto";
import type { EmuClock, Ledger, SimUser } from "../types.js";
import type { HttpsCallbackClient } from "./https.js";
import {
  addDays,
  CODES,
  dayOf,
  domainError,
  InvoiceError,
  type InvoiceInput,
  type InvoiceKind,
  parseInvoice,
  startOfDay,
  toDecimal,
} from "./validate.js";

export type IssuerStatus = "pending" | "enabled" | "disabled";

export interface Issuer {
  Id: string;
  Name: string;
  AccountType: "Account";
  Status: IssuerStatus;
  Address: string;
  City: string;
  ZipCode: string;
}

export interface InvoiceMerchant {
  merchantId: string;
  /** The merchant's VAT number: the ledger's `merchant`, as transaction reporting groups it. */
  vat: string;
  name: string;
  /** The seeded bearer token of this merchant. */
  accessToken: string;
  issuers: Issuer[];
  /** Callback URL and the Authorization header value (Basic or ApiKey), from the PUT auth operations. */
  callback: { url: string; authorization: string } | null;
}

/** Status names as the callbacks and GET answers carry them (seed §Events). */
export type InvoiceStatus = "Created" | "Accepted" | "Paid" | "Rejected" | "Expired" | "Canceled";

export interface Invoice {
  id: string;
  kind: InvoiceKind;
  merchantId: string;
  input: InvoiceInput;
  status: InvoiceStatus;
  /** The paying user (InvoiceDirect: the alias; InvoiceLink: whoever accepted). */
  payer: string | null;
  /** Scheduled payment date, once accepted. */
  paymentDate: string | null;
  /** Next callback Sequence; internal events without a callback also use one (gaps, seed §Invoice callback). */
  sequence: number;
  viaBatch: boolean;
  href: string | null;
  paymentTransactionId: string | null;
}

export interface CallbackElement {
  InvoiceId: string;
  Status: InvoiceStatus | "Invalid";
  Date: string;
  Sequence: number;
  ErrorCode?: number;
  ErrorMessage?: string;
  PaymentDate?: string;
  Links?: { Rel: "user-redirect"; Href: string }[];
}

interface QueuedCallback {
  merchantId: string;
  element: CallbackElement;
  /** Failed deliveries so far. */
  failures: number;
  /** Emulator ms before which it is not (re)sent. */
  notBefore: number;
}

export interface DeliveredCallback {
  merchantId: string;
  url: string;
  at: number;
  elements: CallbackElement[];
}

export type ConsentState = "Pending" | "Granted" | "Denied";

export interface Consent {
  ConsentId: string;
  InvoiceId: string;
  issuerId: string;
  merchantId: string;
  PhoneNumber: string | null;
  State: ConsentState;
}

interface PendingBatchItem {
  id: string;
  kind: InvoiceKind;
  merchantId: string;
  raw: unknown;
  href: string | null;
}

/** Seed 002 §Limits. */
const BATCH_LIMIT = 2000;
const DUE_WINDOW_DAYS = 400;
const GRACE_DAYS = 30;
/** The callback job period (seed: "a job that starts every 5 seconds"), emulator ms. */
export const CALLBACK_JOB_MS = 5000;
const CALLBACK_RETRIES = 8;
const CALLBACK_BATCH = 1000;
const CONSENT_PAGE = 100;

/** Date-time with offset, as the callbacks carry it (`…+00:00`). */
function dateTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

function notFound(what: string): never {
  throw new InvoiceError(404, "DomainError", "10404", `${what} not found`);
}

function conflict(message: string): never {
  throw new InvoiceError(409, "DomainError", "10409", message);
}

export interface InvoiceDeps {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
  https: HttpsCallbackClient;
}

/**
 * The invoice service (seed 002 §Invoices): issuers, InvoiceDirect/InvoiceLink (single and batch), the state
 * machine (created → accepted → paid | rejected; created/accepted → expired; created → canceled), consents,
 * and the callback job that posts arrays of status changes every 5 s of emulator time with 8 retries.
 */
export class InvoiceService {
  readonly merchants = new Map<string, InvoiceMerchant>();
  private readonly invoices = new Map<string, Invoice>();
  private readonly consents = new Map<string, Consent>();
  private readonly numbers = new Set<string>();
  private pendingBatch: PendingBatchItem[] = [];
  private queue: QueuedCallback[] = [];
  readonly delivered: DeliveredCallback[] = [];
  readonly failed: DeliveredCallback[] = [];
  private nextJob: number;
  private jobRunning: Promise<void> | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly d: InvoiceDeps) {
    this.nextJob = d.clock.now() + CALLBACK_JOB_MS;
    this.unsubscribe = d.clock.onTick((now) => this.onTick(now));
  }

  close(): void {
    this.unsubscribe();
  }

  private readonly verifiers: ((token: string) => string | null)[] = [];

  /**
   * Also accepts the bearer tokens a verifier recognises (e.g. the OpenID Connect access tokens of the
   * merchant authentication), mapped to the merchant by the VAT number the verifier returns.
   */
  acceptTokens(verify: (token: string) => string | null): void {
    this.verifiers.push(verify);
  }

  /** The merchant owning a bearer token (the seeded one, or one a verifier accepts), or undefined. */
  merchantByToken(token: string): InvoiceMerchant | undefined {
    for (const m of this.merchants.values()) if (m.accessToken === token) return m;
    for (const verify of this.verifiers) {
      const vat = verify(token);
      if (vat === null) continue;
      for (const m of this.merchants.values()) if (m.vat === vat) return m;
    }
    return undefined;
  }

  private today(): string {
    return dayOf(this.d.clock.now());
  }

  /** Checks that need the world; throws the error answer (the `invalid` outcome). */
  private checkBusiness(m: InvoiceMerchant, input: InvoiceInput, kind: InvoiceKind): void {
    const issuer = m.issuers.find((i) => i.Id === input.InvoiceIssuer);
    if (issuer === undefined) domainError(CODES.issuer, "InvoiceIssuer is not an issuer of this merchant");
    if (issuer.Status !== "enabled") domainError(CODES.issuerNotEnabled, `InvoiceIssuer is ${issuer.Status}`);
    const today = this.today();
    if (input.DueDate < today || input.DueDate > addDays(today, DUE_WINDOW_DAYS))
      domainError(CODES.dueDate, `DueDate must be between today and ${DUE_WINDOW_DAYS} days ahead`);
    if (kind === "direct" && (input.phone === null || this.d.findUser(input.phone) === undefined))
      domainError(CODES.consumerNotUser, "ConsumerAlias is not an app user");
  }

  private numberKey(merchantId: string, input: { InvoiceIssuer: string; InvoiceNumber: string }): string {
    return `${merchantId}|${input.InvoiceIssuer}|${input.InvoiceNumber}`;
  }

  private store(
    m: InvoiceMerchant,
    id: string,
    kind: InvoiceKind,
    input: InvoiceInput,
    href: string | null,
    viaBatch: boolean,
  ): Invoice {
    const inv: Invoice = {
      id,
      kind,
      merchantId: m.merchantId,
      input,
      status: "Created",
      payer: null,
      paymentDate: null,
      sequence: 0,
      viaBatch,
      href,
      paymentTransactionId: null,
    };
    this.invoices.set(id, inv);
    this.numbers.add(this.numberKey(m.merchantId, input));
    const links =
      kind === "link" && viaBatch && href !== null
        ? { Links: [{ Rel: "user-redirect" as const, Href: href }] }
        : {};
    this.emit(inv, "Created", links);
    return inv;
  }

  /** POST …/invoices and …/invoices/link: validated at once; an invalid one is answered, never stored. */
  create(m: InvoiceMerchant, body: unknown, kind: InvoiceKind, linkBase: string): Invoice {
    const input = parseInvoice(body, kind);
    this.checkBusiness(m, input, kind);
    if (this.numbers.has(this.numberKey(m.merchantId, input)))
      domainError(CODES.duplicateNumber, "InvoiceNumber is already used for this issuer");
    const id = randomUUID();
    return this.store(m, id, kind, input, kind === "link" ? `${linkBase}/${id}` : null, false);
  }

  /**
   * The batch operations: the shape of the array and each InvoiceNumber (present, not repeated, not used)
   * are checked now (Rejected[] with ErrorCode); every other rule runs at the next callback job, whose
   * outcome is a `Created` (links in it for InvoiceLinks) or an `Invalid` callback with ErrorCode.
   */
  createBatch(m: InvoiceMerchant, body: unknown, kind: InvoiceKind, linkBase: string) {
    if (!Array.isArray(body) || body.length === 0 || body.length > BATCH_LIMIT)
      throw new InvoiceError(
        400,
        "InputError",
        CODES.batch,
        `the body must be an array of 1 to ${BATCH_LIMIT} invoices`,
      );
    const Accepted: { InvoiceNumber: string; InvoiceId: string }[] = [];
    const Rejected: { InvoiceNumber: string | null; ErrorText: string; ErrorCode: number }[] = [];
    const seen = new Set<string>();
    for (const raw of body) {
      const o =
        typeof raw === "object" && raw !== null && !Array.isArray(raw)
          ? (raw as Record<string, unknown>)
          : null;
      const number =
        o !== null && typeof o.InvoiceNumber === "string" && o.InvoiceNumber.trim() !== ""
          ? o.InvoiceNumber
          : null;
      if (o === null || number === null) {
        Rejected.push({
          InvoiceNumber: number,
          ErrorText: "InvoiceNumber is required",
          ErrorCode: Number(CODES.invoiceNumber),
        });
        continue;
      }
      const key = this.numberKey(m.merchantId, {
        InvoiceIssuer: typeof o.InvoiceIssuer === "string" ? o.InvoiceIssuer.toLowerCase() : "",
        InvoiceNumber: number,
      });
      if (seen.has(key) || this.numbers.has(key)) {
        Rejected.push({
          InvoiceNumber: number,
          ErrorText: "InvoiceNumber is already used for this issuer",
          ErrorCode: Number(CODES.duplicateNumber),
        });
        continue;
      }
      seen.add(key);
      const id = randomUUID();
      this.pendingBatch.push({
        id,
        kind,
        merchantId: m.merchantId,
        raw,
        href: kind === "link" ? `${linkBase}/${id}` : null,
      });
      Accepted.push({ InvoiceNumber: number, InvoiceId: id });
    }
    for (const key of seen) this.numbers.add(key);
    return { Accepted, Rejected };
  }

  private validateBatch(): void {
    const items = this.pendingBatch;
    this.pendingBatch = [];
    for (const item of items) {
      const m = this.merchants.get(item.merchantId);
      if (m === undefined) continue;
      try {
        const input = parseInvoice(item.raw, item.kind);
        this.checkBusiness(m, input, item.kind);
        this.store(m, item.id, item.kind, input, item.href, true);
      } catch (e: unknown) {
        if (!(e instanceof InvoiceError)) throw e;
        const o = item.raw as Record<string, unknown>;
        this.numbers.delete(
          this.numberKey(m.merchantId, {
            InvoiceIssuer: typeof o.InvoiceIssuer === "string" ? o.InvoiceIssuer.toLowerCase() : "",
            InvoiceNumber: String(o.InvoiceNumber),
          }),
        );
        this.queue.push({
          merchantId: m.merchantId,
          element: {
            InvoiceId: item.id,
            Status: "Invalid",
            Date: dateTime(this.d.clock.now()),
            Sequence: 0,
            ErrorCode: Number(e.code),
            ErrorMessage: e.message,
          },
          failures: 0,
          notBefore: 0,
        });
      }
    }
  }

  invoice(m: InvoiceMerchant, id: string): Invoice {
    const inv = this.invoices.get(id.toLowerCase());
    if (inv === undefined || inv.merchantId !== m.merchantId) notFound("invoice");
    return inv;
  }

  /** Any invoice by id (user side: any app user may open a link). */
  find(id: string): Invoice {
    const inv = this.invoices.get(id.toLowerCase());
    if (inv === undefined) notFound("invoice");
    return inv;
  }

  cancel(m: InvoiceMerchant, id: string): void {
    const inv = this.invoice(m, id);
    if (inv.status !== "Created") conflict(`an invoice in status ${inv.status} cannot be canceled`);
    this.emit(inv, "Canceled");
  }

  private emit(inv: Invoice, status: InvoiceStatus, extra: Partial<CallbackElement> = {}): void {
    inv.status = status;
    this.queue.push({
      merchantId: inv.merchantId,
      element: {
        InvoiceId: inv.id,
        Status: status,
        Date: dateTime(this.d.clock.now()),
        Sequence: inv.sequence,
        ...extra,
      },
      failures: 0,
      notBefore: 0,
    });
    inv.sequence += 1;
  }

  /** The user swipes to accept (created → accepted), paying now or on `paymentDate`. */
  accept(id: string, phone: string, paymentDate: string | null): Invoice {
    const inv = this.find(id);
    const user = this.d.findUser(phone);
    if (user === undefined) notFound("app user");
    if (inv.kind === "direct" && inv.input.phone !== phone) conflict("this invoice was sent to another user");
    if (inv.status !== "Created") conflict(`an invoice in status ${inv.status} cannot be accepted`);
    const today = this.today();
    const date = paymentDate ?? today;
    this.checkPaymentDate(inv, date);
    inv.payer = phone;
    inv.paymentDate = date;
    this.emit(inv, "Accepted", { PaymentDate: date });
    if (date <= today) this.execute(inv);
    return inv;
  }

  private checkPaymentDate(inv: Invoice, date: string): void {
    if (Number.isNaN(startOfDay(date))) domainError(CODES.date, "paymentDate must be a date YYYY-MM-DD");
    if (date < this.today()) conflict("paymentDate is in the past");
    if (date > addDays(inv.input.DueDate, GRACE_DAYS))
      conflict(`paymentDate is at most ${GRACE_DAYS} days after DueDate`);
  }

  /** The user moves the scheduled payment (at most 30 days beyond DueDate). */
  reschedule(id: string, phone: string, paymentDate: string): Invoice {
    const inv = this.find(id);
    if (inv.status !== "Accepted" || inv.payer !== phone)
      conflict("only the payer's accepted invoice can be rescheduled");
    this.checkPaymentDate(inv, paymentDate);
    inv.paymentDate = paymentDate;
    inv.sequence += 1;
    return inv;
  }

  /** The user rejects an accepted invoice whose payment is scheduled (accepted → rejected). */
  reject(id: string, phone: string): Invoice {
    const inv = this.find(id);
    if (inv.status !== "Accepted") conflict(`an invoice in status ${inv.status} cannot be rejected`);
    if (inv.payer !== phone) conflict("only the user who accepted can reject");
    this.emit(inv, "Rejected");
    return inv;
  }

  /**
   * The payment (user-side validation: a user with insufficient funds fails, which shows in the app only:
   * the invoice stays accepted and expires at DueDate + 30 days; the Sequence moves, leaving a gap).
   */
  private execute(inv: Invoice): void {
    const user = inv.payer === null ? undefined : this.d.findUser(inv.payer);
    if (user === undefined || user.features.includes("insufficientFunds")) {
      inv.sequence += 1;
      inv.paymentDate = null;
      return;
    }
    const m = this.merchants.get(inv.merchantId);
    inv.paymentTransactionId = randomUUID();
    this.d.ledger.record({
      interface: "invoices",
      id: inv.id,
      paymentId: null,
      orderId: inv.input.PaymentReference ?? inv.input.InvoiceNumber,
      kind: "paid",
      amount: inv.input.TotalAmount,
      ...(m ? { merchant: m.vat } : {}),
      point: inv.input.InvoiceIssuer,
    });
    this.emit(inv, "Paid", { PaymentDate: this.today() });
    for (const c of this.consents.values()) {
      if (c.InvoiceId === inv.id && c.State === "Pending" && this.hasGranted(c.issuerId, inv.payer)) {
        c.State = "Granted";
        c.PhoneNumber = inv.payer;
      }
    }
  }

  private hasGranted(issuerId: string, phone: string | null): boolean {
    for (const c of this.consents.values())
      if (c.issuerId === issuerId && c.State === "Granted" && c.PhoneNumber === phone) return true;
    return false;
  }

  /** Time rules: scheduled payments on their date, expiry after DueDate + 30 days. */
  private runTimeRules(now: number): void {
    const today = dayOf(now);
    for (const inv of this.invoices.values()) {
      if (inv.status === "Accepted" && inv.paymentDate !== null && inv.paymentDate <= today)
        this.execute(inv);
      if (
        (inv.status === "Created" || inv.status === "Accepted") &&
        today > addDays(inv.input.DueDate, GRACE_DAYS)
      )
        this.emit(inv, "Expired");
    }
  }

  private onTick(now: number): void {
    this.runTimeRules(now);
    if (now < this.nextJob || this.jobRunning !== null) return;
    this.nextJob = now + CALLBACK_JOB_MS;
    this.jobRunning = this.runJob(now).finally(() => {
      this.jobRunning = null;
    });
  }

  /** The callback job: batch validation, then one POST per merchant with up to 1000 due elements. */
  private async runJob(now: number): Promise<void> {
    this.validateBatch();
    const byMerchant = new Map<string, QueuedCallback[]>();
    for (const q of this.queue) {
      const m = this.merchants.get(q.merchantId);
      if (q.notBefore > now || m?.callback == null) continue;
      const list = byMerchant.get(q.merchantId) ?? [];
      if (list.length < CALLBACK_BATCH) list.push(q);
      byMerchant.set(q.merchantId, list);
    }
    await Promise.all(
      [...byMerchant].map(async ([merchantId, items]) => {
        const m = this.merchants.get(merchantId);
        if (m?.callback == null) return;
        const { url, authorization } = m.callback;
        const elements = items.map((q) => q.element);
        const status = await this.d.https.post(url, elements, { authorization });
        const record = { merchantId, url, at: this.d.clock.now(), elements };
        if (status !== null && status >= 200 && status < 300) {
          this.delivered.push(record);
          this.queue = this.queue.filter((q) => !items.includes(q));
          return;
        }
        for (const q of items) {
          q.failures += 1;
          q.notBefore = now + CALLBACK_JOB_MS * 2 ** (q.failures - 1);
        }
        const dropped = items.filter((q) => q.failures > CALLBACK_RETRIES);
        if (dropped.length > 0) {
          this.failed.push({ ...record, elements: dropped.map((q) => q.element) });
          this.queue = this.queue.filter((q) => !dropped.includes(q));
        }
      }),
    );
  }

  /** Waits for a running callback job (tests, close). */
  async settle(): Promise<void> {
    if (this.jobRunning) await this.jobRunning;
  }

  /** Callbacks waiting for the job (not yet delivered, or waiting for a retry). */
  pending(): { merchantId: string; element: CallbackElement; failures: number; notBefore: number }[] {
    return this.queue.map((q) => ({ ...q }));
  }

  createConsent(m: InvoiceMerchant, invoiceId: unknown): Consent {
    if (typeof invoiceId !== "string")
      throw new InvoiceError(400, "InputError", CODES.body, "InvoiceId is required");
    const inv = this.invoice(m, invoiceId);
    if (inv.kind !== "link") domainError("10601", "consent is asked after an InvoiceLink");
    const consent: Consent = {
      ConsentId: randomUUID(),
      InvoiceId: inv.id,
      issuerId: inv.input.InvoiceIssuer,
      merchantId: m.merchantId,
      PhoneNumber: null,
      State: "Pending",
    };
    if (inv.status === "Paid" && this.hasGranted(consent.issuerId, inv.payer)) {
      consent.State = "Granted";
      consent.PhoneNumber = inv.payer;
    }
    this.consents.set(consent.ConsentId, consent);
    return consent;
  }

  consent(m: InvoiceMerchant, id: string): Consent {
    const c = this.consents.get(id.toLowerCase());
    if (c === undefined || c.merchantId !== m.merchantId) notFound("consent");
    return c;
  }

  /** Granted consents of an issuer, in pages of 100; `PagingState` is the offset, opaque (base64url). */
  grantedConsents(m: InvoiceMerchant, issuerId: string, paging: string | null) {
    const all = [...this.consents.values()].filter(
      (c) => c.merchantId === m.merchantId && c.issuerId === issuerId.toLowerCase() && c.State === "Granted",
    );
    let offset = 0;
    if (paging !== null) {
      offset = Number(Buffer.from(paging, "base64url").toString("utf8"));
      if (!Number.isSafeInteger(offset) || offset < 0)
        throw new InvoiceError(400, "InputError", CODES.body, "PagingState is not valid");
    }
    const page = all.slice(offset, offset + CONSENT_PAGE);
    const next =
      offset + CONSENT_PAGE < all.length
        ? Buffer.from(String(offset + CONSENT_PAGE)).toString("base64url")
        : null;
    return { GrantedConsents: page.map(consentView), PagingState: next };
  }

  /** The user decides in the consent window, shown after the InvoiceLink is paid. */
  decideConsent(id: string, phone: string, grant: boolean): Consent {
    const c = this.consents.get(id.toLowerCase());
    if (c === undefined) notFound("consent");
    const inv = this.find(c.InvoiceId);
    if (inv.status !== "Paid" || inv.payer !== phone)
      conflict("the consent window shows after the payer paid the invoice");
    if (c.State !== "Pending") conflict(`the consent is already ${c.State}`);
    c.State = grant ? "Granted" : "Denied";
    c.PhoneNumber = grant ? phone : null;
    return c;
  }
}

export function consentView(c: Consent) {
  return { ConsentId: c.ConsentId, InvoiceId: c.InvoiceId, PhoneNumber: c.PhoneNumber, State: c.State };
}

/** The invoice details answer (seed 002 §Invoice details). */
export function detailsView(inv: Invoice, m: InvoiceMerchant) {
  const issuer = m.issuers.find((i) => i.Id === inv.input.InvoiceIssuer);
  const byRate = new Map<number, number>();
  for (const a of inv.input.InvoiceArticles)
    byRate.set(a.VATRate, (byRate.get(a.VATRate) ?? 0) + a.TotalVATAmount);
  const i = inv.input;
  return {
    InvoiceId: inv.id,
    InvoiceNumber: i.InvoiceNumber,
    IssueDate: i.IssueDate,
    DueDate: i.DueDate,
    PaymentDate: inv.paymentDate,
    Comment: i.Comment,
    InvoiceArticles: i.InvoiceArticles.map((a) => ({
      ArticleNumber: a.ArticleNumber,
      ArticleDescription: a.ArticleDescription,
      TotalPriceIncludingVat: toDecimal(a.TotalPriceIncludingVat),
      Quantity: a.Quantity,
      PricePerUnit: a.PricePerUnit,
    })),
    CurrencyCode: i.CurrencyCode,
    TotalAmount: toDecimal(i.TotalAmount),
    InvoiceVatTotals: [...byRate].map(([VatRate, v]) => ({ VatRate, TotalVatAmount: toDecimal(v) })),
    TotalVatAmount: toDecimal(i.TotalVatAmount),
    TotalAmountExcludingVat: toDecimal(i.TotalAmount - i.TotalVatAmount),
    MerchantId: m.merchantId,
    InvoiceIssuerId: i.InvoiceIssuer,
    InvoiceIssuerName: issuer?.Name ?? null,
    InvoiceIssuerAddress: issuer?.Address ?? null,
    InvoiceIssuerZipcode: issuer?.ZipCode ?? null,
    InvoiceIssuerCity: issuer?.City ?? null,
    MerchantIsoCountryCode: i.CountryCode,
    LogoUrl: null,
    Status: inv.status,
    InvoiceUrl: i.InvoiceUrl,
    PaymentTransactionId: inv.paymentTransactionId,
  };
}
