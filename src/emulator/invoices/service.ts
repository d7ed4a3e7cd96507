import { randomUUID } from "node:crypto";
import type { EmuClock, Ledger, SimUser } from "../types.js";
import { admitBatch, numberKey, type PendingBatchItem, rawNumberKey } from "./batch.js";
import { ConsentBook } from "./consents.js";
import type { HttpsCallbackClient } from "./https.js";
import {
  type CallbackElement,
  conflict,
  type Invoice,
  type InvoiceMerchant,
  type InvoiceStatus,
  notFound,
} from "./model.js";
import { CALLBACK_JOB_MS, CallbackOutbox } from "./outbox.js";
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
} from "./validate.js";

/** Seed 002 §Limits. */
const DUE_WINDOW_DAYS = 400;
const GRACE_DAYS = 30;

/** Date-time with offset, as the callbacks carry it (`…+00:00`). */
function dateTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

export interface InvoiceDeps {
  clock: EmuClock;
  ledger: Ledger;
  findUser(phone: string): SimUser | undefined;
  https: HttpsCallbackClient;
}

/**
 * The invoice service (seed 002 §Invoices): issuers, InvoiceDirect/InvoiceLink (single and batch), the state
 * machine (created → accepted → paid | rejected; created/accepted → expired; created → canceled), and the
 * callback job every 5 s of emulator time (batch validation, then the outbox's delivery). Consents:
 * consents.ts; the batch intake: batch.ts; the callbacks' queue and retries: outbox.ts.
 */
export class InvoiceService {
  readonly merchants = new Map<string, InvoiceMerchant>();
  private readonly invoices = new Map<string, Invoice>();
  private readonly numbers = new Set<string>();
  private pendingBatch: PendingBatchItem[] = [];
  readonly outbox: CallbackOutbox;
  readonly consents = new ConsentBook(this);
  private nextJob: number;
  private jobRunning: Promise<void> | null = null;
  private readonly unsubscribe: () => void;
  private readonly unschedule: () => void;

  constructor(private readonly d: InvoiceDeps) {
    this.outbox = new CallbackOutbox(d, this.merchants);
    this.nextJob = d.clock.now() + CALLBACK_JOB_MS;
    this.unsubscribe = d.clock.onTick((now) => this.onTick(now));
    this.unschedule = d.clock.schedule(() => this.nextDue());
  }

  close(): void {
    this.unsubscribe();
    this.unschedule();
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
    this.numbers.add(numberKey(m.merchantId, input));
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
    if (this.numbers.has(numberKey(m.merchantId, input)))
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
    const { Accepted, Rejected, items, keys } = admitBatch(m, body, kind, linkBase, this.numbers);
    this.pendingBatch.push(...items);
    for (const key of keys) this.numbers.add(key);
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
        this.numbers.delete(rawNumberKey(m.merchantId, o, String(o.InvoiceNumber)));
        this.outbox.add(m.merchantId, {
          InvoiceId: item.id,
          Status: "Invalid",
          Date: dateTime(this.d.clock.now()),
          Sequence: 0,
          ErrorCode: Number(e.code),
          ErrorMessage: e.message,
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
    this.outbox.add(inv.merchantId, {
      InvoiceId: inv.id,
      Status: status,
      Date: dateTime(this.d.clock.now()),
      Sequence: inv.sequence,
      ...extra,
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
      currency: inv.input.CurrencyCode,
      ...(m ? { merchant: m.vat } : {}),
      point: inv.input.InvoiceIssuer,
    });
    // Seed 002: a callback element carries PaymentDate "only when accepted"; the paid day is the Accepted one's.
    this.emit(inv, "Paid");
    this.consents.grantOnPayment(inv);
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

  /**
   * The earliest emulator time at which the time rules or the job have something to do (the clock stops
   * there within an advance): a scheduled payment at 00:00 UTC of its date, an expiry at 00:00 after
   * DueDate + 30 days, the next job while batch elements wait for validation; null when nothing waits.
   */
  private nextDue(): number | null {
    let min = this.pendingBatch.length > 0 ? this.nextJob : null;
    const consider = (t: number): void => {
      if (min === null || t < min) min = t;
    };
    for (const inv of this.invoices.values()) {
      if (inv.status !== "Created" && inv.status !== "Accepted") continue;
      if (inv.status === "Accepted" && inv.paymentDate !== null)
        consider(Date.parse(`${inv.paymentDate}T00:00:00Z`));
      consider(Date.parse(`${addDays(inv.input.DueDate, GRACE_DAYS + 1)}T00:00:00Z`));
    }
    return min;
  }

  private onTick(now: number): void {
    this.runTimeRules(now);
    if (now < this.nextJob || this.jobRunning !== null) return;
    this.nextJob = now + CALLBACK_JOB_MS;
    this.jobRunning = this.runJob(now).finally(() => {
      this.jobRunning = null;
    });
  }

  /** The callback job: batch validation, then the outbox's delivery. */
  private async runJob(now: number): Promise<void> {
    this.validateBatch();
    await this.outbox.deliver(now);
  }

  /** Waits for a running callback job (tests, close). */
  async settle(): Promise<void> {
    if (this.jobRunning) await this.jobRunning;
  }
}
