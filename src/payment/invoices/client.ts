/**
 * Client of the invoice interface (seed 002 §Invoices): InvoiceDirect to an app user's phone, InvoiceLink,
 * status, details, cancel, the callback authentication (PUT auth/basic, auth/apikey) and the invoice
 * issuers. Amounts are integer minor units here; decimals exist only in the JSON bodies.
 *
 * Repetition follows the shared policy (../retry.ts): GET and PUT are repeated after a network error, a
 * timeout or a 5xx; a POST that creates an invoice is repeated too, because its InvoiceNumber is its
 * idempotency key: the service refuses a second invoice with the same number for the same issuer (10504),
 * so a repeat can never bill twice. When the first answer was lost and the repeat is refused as a
 * duplicate, the caller learns it as `InvoiceApiError` with `duplicate: true`.
 *
 * The access token never appears in an error or a log line: errors carry the operation, the HTTP status and
 * the service's error code and description only.
 */
import { Agent, type Dispatcher } from "undici";
import { z } from "zod";
import type { Clock } from "../../core/clock.js";
import { amountFromJson, amountToJson, type Minor } from "../../core/money.js";
import { DEFAULT_RETRY_POLICY, decideRetry, type RetryPolicy } from "../retry.js";

/** Status names of the invoice interface (seed §Events, §States). */
export const INVOICE_STATUSES = [
  "Created",
  "Invalid",
  "Accepted",
  "Paid",
  "Rejected",
  "Expired",
  "Canceled",
] as const;
export type RemoteInvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** One article line, minor units; VAT rate in basis points (2500 = 25 %). */
export interface InvoiceArticleInput {
  articleNumber: string;
  description: string;
  vatBp: number;
  vat: Minor;
  gross: Minor;
  unit: string;
  quantity: number;
  unitPrice: Minor;
}

export interface InvoiceInput {
  issuerId: string;
  /** `+` and country code; required for InvoiceDirect, prefills the landing page of an InvoiceLink. */
  phone: string | null;
  consumerName?: string;
  total: Minor;
  vatTotal: Minor;
  country: "DK" | "FI";
  invoiceNumber: string;
  /** `YYYY-MM-DD`. */
  issueDate: string;
  orderDate: string;
  deliveryDate: string;
  dueDate: string;
  comment?: string;
  /** Reconciliation reference, at most 60 characters (30 used for instant transfers). */
  paymentReference?: string;
  articles: InvoiceArticleInput[];
}

/** The seed's create body (§Invoice create input) for an input: decimals at this edge only. */
export function invoiceJson(i: InvoiceInput): Record<string, unknown> {
  return {
    InvoiceIssuer: i.issuerId,
    ...(i.phone === null ? {} : { ConsumerAlias: { Alias: i.phone, AliasType: "Phone" } }),
    ...(i.consumerName === undefined ? {} : { ConsumerName: i.consumerName }),
    TotalAmount: amountToJson(i.total),
    TotalVatAmount: amountToJson(i.vatTotal),
    CountryCode: i.country,
    CurrencyCode: i.country === "DK" ? "DKK" : "EUR",
    InvoiceNumber: i.invoiceNumber,
    IssueDate: i.issueDate,
    OrderDate: i.orderDate,
    DeliveryDate: i.deliveryDate,
    DueDate: i.dueDate,
    ...(i.comment === undefined ? {} : { Comment: i.comment }),
    ...(i.paymentReference === undefined ? {} : { PaymentReference: i.paymentReference }),
    InvoiceArticles: i.articles.map((a) => ({
      ArticleNumber: a.articleNumber,
      ArticleDescription: a.description,
      VATRate: a.vatBp / 100,
      TotalVATAmount: amountToJson(a.vat),
      TotalPriceIncludingVat: amountToJson(a.gross),
      Unit: a.unit,
      Quantity: a.quantity,
      PricePerUnit: amountToJson(a.unitPrice),
      PriceReduction: 0,
      PriceDiscount: 0,
      Bonus: 0,
    })),
  };
}

/** A failed call: the operation, the HTTP status (0 = no answer) and the service's error answer fields. */
export class InvoiceApiError extends Error {
  override readonly name = "InvoiceApiError";
  constructor(
    readonly op: string,
    readonly status: number,
    readonly error: string | null,
    readonly code: string | null,
    description: string,
  ) {
    super(
      `invoices ${op}: ${status === 0 ? "no answer" : `HTTP ${status}`}${code ? ` ${code}` : ""}: ${description}`,
    );
  }
  /** The service refused the InvoiceNumber as already used for this issuer (seed example 10504). */
  get duplicate(): boolean {
    return this.code === "10504";
  }
}

const ErrorAnswer = z.object({
  error: z.string().optional(),
  error_code: z.string().optional(),
  error_description: z.string().optional(),
});
const Created = z.object({ InvoiceId: z.string().min(1) });
const LinkCreated = z.object({
  InvoiceId: z.string().min(1),
  Links: z.array(z.object({ Rel: z.string(), Href: z.string() })).optional(),
});
const StatusAnswer = z.object({ InvoiceId: z.string(), Status: z.enum(INVOICE_STATUSES) });
const MerchantAnswer = z.object({ MerchantId: z.string().min(1) });
const IssuersAnswer = z.object({
  InvoiceIssuers: z.array(
    z.object({ Id: z.string(), Name: z.string(), Status: z.string(), AccountType: z.string().optional() }),
  ),
});
const DetailsAnswer = z.object({
  InvoiceId: z.string(),
  InvoiceNumber: z.string(),
  InvoiceIssuerId: z.string().nullable().optional(),
  Status: z.enum(INVOICE_STATUSES),
  TotalAmount: z.number(),
  TotalVatAmount: z.number(),
  PaymentDate: z.string().nullable().optional(),
  PaymentTransactionId: z.string().nullable().optional(),
});

export interface InvoiceDetails {
  invoiceId: string;
  invoiceNumber: string;
  issuerId: string | null;
  status: RemoteInvoiceStatus;
  total: Minor;
  vatTotal: Minor;
  paymentDate: string | null;
  paymentTransactionId: string | null;
}

export interface InvoicesClientOptions {
  /** Origin of the service, e.g. `https://api.example` (paths are `/api/v1/…`). */
  baseUrl: string;
  /** The bearer access token (from the OpenID flow); a function so a refreshed token is used at once. */
  accessToken: () => string;
  clock: Clock;
  /** Jitter source for the backoff, [0, 1). */
  random: () => number;
  policy?: RetryPolicy;
  /** Per-attempt timeout, ms (default 10 000). */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
}

type Attempt = { status: number; body: unknown } | { status: 0; kind: "network" | "timeout" };

export class InvoicesClient {
  private readonly dispatcher: Dispatcher;
  private readonly owned: boolean;
  private readonly origin: string;
  private merchant: string | null = null;

  constructor(private readonly o: InvoicesClientOptions) {
    this.origin = new URL(o.baseUrl).origin;
    this.owned = o.dispatcher === undefined;
    this.dispatcher =
      o.dispatcher ?? new Agent({ keepAliveTimeout: 4000, connect: { minVersion: "TLSv1.2" } });
  }

  async close(): Promise<void> {
    if (this.owned) await this.dispatcher.close();
  }

  private async once(method: string, path: string, body: unknown): Promise<Attempt> {
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path,
        method: method as Dispatcher.HttpMethod,
        headers: {
          authorization: `Bearer ${this.o.accessToken()}`,
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? null : JSON.stringify(body),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await res.body.text();
      let parsed: unknown;
      try {
        parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
      } catch {
        parsed = undefined;
      }
      return { status: res.statusCode, body: parsed };
    } catch (e: unknown) {
      const code = (e as { code?: unknown }).code;
      const timeout = code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT";
      return { status: 0, kind: timeout ? "timeout" : "network" };
    }
  }

  /** One operation with the shared retry policy; returns the body of a 2xx answer or throws. */
  private async call(
    op: string,
    method: "GET" | "POST" | "PUT",
    path: string,
    body?: unknown,
    idempotent = false,
  ): Promise<unknown> {
    const policy = this.o.policy ?? DEFAULT_RETRY_POLICY;
    for (let attempt = 1; ; attempt++) {
      const r = await this.once(method, path, body);
      if (r.status >= 200 && r.status < 300 && "body" in r) return r.body;
      const answer = "body" in r ? ErrorAnswer.safeParse(r.body) : null;
      const code = answer?.success === true ? (answer.data.error_code ?? null) : null;
      const decision = decideRetry(
        {
          attempt,
          method,
          outcome:
            r.status === 0 && "kind" in r
              ? { kind: r.kind }
              : { kind: "status", status: r.status, ...(code === null ? {} : { code }) },
          hasIdempotencyKey: idempotent,
          policy,
        },
        this.o.random,
      );
      if (!decision.retry) {
        const a = answer?.success === true ? answer.data : {};
        throw new InvoiceApiError(
          op,
          r.status,
          a.error ?? null,
          code,
          (
            a.error_description ?? (r.status === 0 ? "the service did not answer" : "unexpected answer")
          ).slice(0, 300),
        );
      }
      await this.o.clock.sleep(decision.delayMs);
    }
  }

  private parse<T>(op: string, schema: z.ZodType<T>, body: unknown): T {
    const r = schema.safeParse(body);
    if (!r.success)
      throw new InvoiceApiError(op, 200, null, null, "the answer does not have the seed's shape");
    return r.data;
  }

  /** GET /api/v1/merchants/me (cached). */
  async merchantId(): Promise<string> {
    if (this.merchant !== null) return this.merchant;
    const r = this.parse(
      "merchant",
      MerchantAnswer,
      await this.call("merchant", "GET", "/api/v1/merchants/me"),
    );
    this.merchant = r.MerchantId;
    return r.MerchantId;
  }

  private async base(): Promise<string> {
    return `/api/v1/merchants/${encodeURIComponent(await this.merchantId())}`;
  }

  async issuers(): Promise<{ id: string; name: string; status: string }[]> {
    const r = this.parse(
      "issuers",
      IssuersAnswer,
      await this.call("issuers", "GET", `${await this.base()}/invoiceissuers`),
    );
    return r.InvoiceIssuers.map((i) => ({ id: i.Id, name: i.Name, status: i.Status }));
  }

  /** POST …/invoices (InvoiceDirect): the invoice id. */
  async sendDirect(input: InvoiceInput): Promise<{ invoiceId: string }> {
    if (input.phone === null)
      throw new InvoiceApiError("sendDirect", 0, null, null, "InvoiceDirect needs a phone");
    const body = await this.call(
      "sendDirect",
      "POST",
      `${await this.base()}/invoices`,
      invoiceJson(input),
      true,
    );
    return { invoiceId: this.parse("sendDirect", Created, body).InvoiceId };
  }

  /** POST …/invoices/link (InvoiceLink): the invoice id and the `user-redirect` link. */
  async sendLink(input: InvoiceInput): Promise<{ invoiceId: string; link: string | null }> {
    const body = await this.call(
      "sendLink",
      "POST",
      `${await this.base()}/invoices/link`,
      invoiceJson(input),
      true,
    );
    const r = this.parse("sendLink", LinkCreated, body);
    return { invoiceId: r.InvoiceId, link: r.Links?.find((l) => l.Rel === "user-redirect")?.Href ?? null };
  }

  async status(invoiceId: string): Promise<RemoteInvoiceStatus> {
    const body = await this.call(
      "status",
      "GET",
      `${await this.base()}/invoices/${encodeURIComponent(invoiceId)}/status`,
    );
    return this.parse("status", StatusAnswer, body).Status;
  }

  async details(invoiceId: string): Promise<InvoiceDetails> {
    const body = await this.call(
      "details",
      "GET",
      `${await this.base()}/invoices/${encodeURIComponent(invoiceId)}`,
    );
    const d = this.parse("details", DetailsAnswer, body);
    return {
      invoiceId: d.InvoiceId,
      invoiceNumber: d.InvoiceNumber,
      issuerId: d.InvoiceIssuerId ?? null,
      status: d.Status,
      total: amountFromJson(d.TotalAmount),
      vatTotal: amountFromJson(d.TotalVatAmount),
      paymentDate: d.PaymentDate ?? null,
      paymentTransactionId: d.PaymentTransactionId ?? null,
    };
  }

  /** PUT …/invoices/{id}/cancel: only an invoice not paid, rejected or expired (seed §States). */
  async cancel(invoiceId: string): Promise<void> {
    await this.call("cancel", "PUT", `${await this.base()}/invoices/${encodeURIComponent(invoiceId)}/cancel`);
  }

  /** PUT …/auth/basic: callbacks then carry `Authorization: Basic base64(username:password)`. */
  async setCallbackBasic(callbackUrl: string, username: string, password: string): Promise<void> {
    await this.call("setCallback", "PUT", `${await this.base()}/auth/basic`, {
      username,
      password,
      callbackurl: callbackUrl,
    });
  }

  /** PUT …/auth/apikey: callbacks then carry the key as the Authorization header's value. */
  async setCallbackApiKey(callbackUrl: string, apiKey: string): Promise<void> {
    await this.call("setCallback", "PUT", `${await this.base()}/auth/apikey`, {
      ApiKey: apiKey,
      callbackurl: callbackUrl,
    });
  }
}

/** One element of an invoice callback (seed §Invoice callback element). */
export const InvoiceCallbackElement = z.object({
  InvoiceId: z.string().min(1).max(100),
  Status: z.enum(INVOICE_STATUSES),
  Date: z.string().max(64),
  Sequence: z.number().int().min(0),
  ErrorCode: z.number().int().optional(),
  ErrorMessage: z.string().max(2000).optional(),
  PaymentDate: z.string().max(64).optional(),
  Links: z.array(z.object({ Rel: z.string(), Href: z.string() })).optional(),
});
export type InvoiceCallbackElement = z.infer<typeof InvoiceCallbackElement>;

/** A callback body: an array of elements (the job sends them in batches). */
export const InvoiceCallbackBody = z.array(InvoiceCallbackElement).max(5000);

/** The callback authentication the fleet set for itself with the PUT auth operations. */
export type CallbackAuth =
  | { kind: "basic"; username: string; password: string }
  | { kind: "apikey"; key: string };

/** The exact Authorization header value the service sends for `auth` (seed §Authentication). */
export function expectedAuthorization(auth: CallbackAuth): string {
  return auth.kind === "basic"
    ? `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`
    : auth.key;
}
