import { randomBytes } from "node:crypto";
import { amountToJson, formatAmount } from "../../core/money.js";
import type { EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import {
  amount,
  httpsUrl,
  isJson,
  jsonPatch,
  type Obj,
  obj,
  optStr,
  parseJson,
  SubsInputError,
  str,
  TOKEN68,
} from "./codec.js";
import { badRequest, conflict, NOT_FOUND, precondition, serverError, UNAUTHORIZED } from "./errors.js";
import type { Agreement, OneOff, SubsMerchant, SubsPayment } from "./model.js";
import { parseAgreement, parseAttachment, parseOneOff, parsePayment } from "./parse.js";
import { pdfOf } from "./pdf.js";
import { SubsConflict, type SubsState } from "./state.js";

/** The token endpoint of the subscriptions interface (OpenID Connect / OAuth 2.0 client credentials). */
export const SUBS_TOKEN_PATH = "/subscriptions-auth/connect/token";
/** The landing page of the `mobile-pay` links. */
export const LANDING_PATH = "/subscriptions/landing";
const TOKEN_LIFE_MS = 3600_000;
const MAX_PAYMENTS = 2000;

export const CURRENT_PREFIX = "/api/providers/";
export const DEPRECATED_PREFIX = "/api/merchants/me";

interface Ctx {
  req: EmuRequest;
  merchant: SubsMerchant;
  deprecated: boolean;
}

function origin(req: EmuRequest): string {
  return new URL(req.url).origin;
}

/**
 * The routes of both subscriptions interfaces. The current one is reached with a bearer token from
 * SUBS_TOKEN_PATH; the deprecated one (`/api/merchants/me/...`) only through the TLS listener, which
 * verifies the client certificate and the `x-gateway-client-*` headers and passes the merchant in.
 */
export class SubsRoutes implements InterfaceHandler {
  private readonly tokens = new Map<string, { merchantId: string; exp: number }>();

  constructor(
    private readonly s: SubsState,
    private readonly now: () => number,
  ) {}

  /** Plain listener: token endpoint, landing page and the current interface. */
  async handle(req: EmuRequest): Promise<EmuResponse | null> {
    if (req.path === SUBS_TOKEN_PATH) return this.token(req);
    if (req.path === LANDING_PATH) return this.landing(req);
    if (req.path === DEPRECATED_PREFIX && req.method === "GET")
      return this.current(req, () => this.lookup(req));
    if (
      req.path.startsWith(`${DEPRECATED_PREFIX}/`) ||
      (req.path === DEPRECATED_PREFIX && req.method === "PATCH")
    )
      return {
        status: 401,
        body: {
          error: "Unauthorized",
          error_description: {
            message: "the deprecated interface needs a client certificate: use the TLS listener",
            error_type: "AuthenticationError",
          },
        },
      };
    if (!req.path.startsWith(CURRENT_PREFIX)) return null;
    return this.current(req, (m) => this.provider(req, m));
  }

  private async current(req: EmuRequest, run: (m: SubsMerchant) => EmuResponse): Promise<EmuResponse> {
    const auth = req.headers.authorization;
    if (typeof auth !== "string" || !auth.startsWith("Bearer ")) return UNAUTHORIZED;
    const t = this.tokens.get(auth.slice(7).trim());
    if (t === undefined || t.exp <= this.now()) return UNAUTHORIZED;
    const m = this.s.merchants.get(t.merchantId);
    if (m === undefined) return UNAUTHORIZED;
    return this.guard(req, () => run(m));
  }

  private guard(req: EmuRequest, run: () => EmuResponse): EmuResponse {
    if (
      ["POST", "PATCH", "PUT"].includes(req.method) &&
      req.body.length > 0 &&
      !isJson(req.headers["content-type"])
    )
      return badRequest(req, "Content-Type must be application/json");
    try {
      return run();
    } catch (e: unknown) {
      if (e instanceof SubsInputError) return badRequest(req, e.message);
      if (e instanceof SubsConflict) return conflict(req, e.message);
      throw e;
    }
  }

  /** Deprecated interface, called by the TLS listener once the merchant is authenticated. */
  deprecated(req: EmuRequest, merchant: SubsMerchant): EmuResponse {
    if (this.s.systemDeclines.deprecated500 > 0) {
      this.s.systemDeclines.deprecated500 -= 1;
      return serverError(req, "An unexpected error occurred.");
    }
    const ctx: Ctx = { req, merchant, deprecated: true };
    const rest = req.path.slice(DEPRECATED_PREFIX.length);
    const providerId = merchant.providers[0];
    if (providerId === undefined) return serverError(req, "merchant has no provider");
    return this.guard(req, () => {
      if (rest === "" && req.method === "PATCH") return this.patchCallbackUrl(ctx, providerId);
      if (rest === "/agreements" && req.method === "POST") return this.createAgreement(ctx, providerId);
      if (rest === "/agreements" && req.method === "GET")
        return {
          status: 200,
          body: [...this.s.agreements.values()].filter((a) => a.providerId === providerId).map(agreementView),
        };
      const m = /^\/agreements\/([^/]+)$/.exec(rest);
      if (m?.[1] && req.method === "PATCH") return this.patchAgreement(ctx, providerId, m[1]);
      if (m?.[1] && req.method === "GET") {
        const a = this.s.agreements.get(m[1]);
        return a?.providerId === providerId ? { status: 200, body: agreementView(a) } : NOT_FOUND;
      }
      if (rest === "/paymentrequests" && req.method === "POST") return this.paymentRequests(ctx, providerId);
      return NOT_FOUND;
    });
  }

  // ---- token, lookup, landing -------------------------------------------------------------------------

  private token(req: EmuRequest): EmuResponse {
    if (req.method !== "POST") return { status: 405, headers: { allow: "POST" } };
    const form = new URLSearchParams(req.body.toString("utf8"));
    let id = form.get("client_id");
    let secret = form.get("client_secret");
    const auth = req.headers.authorization;
    if (typeof auth === "string" && auth.startsWith("Basic ")) {
      const text = Buffer.from(auth.slice(6), "base64").toString("utf8");
      const colon = text.indexOf(":");
      if (colon > 0) {
        try {
          id = decodeURIComponent(text.slice(0, colon));
          secret = decodeURIComponent(text.slice(colon + 1));
        } catch {
          return { status: 401, body: { error: "invalid_client" } };
        }
      }
    }
    if (form.get("grant_type") !== "client_credentials")
      return { status: 400, body: { error: "unsupported_grant_type" } };
    const m = [...this.s.merchants.values()].find((x) => x.clientId === id && x.clientSecret === secret);
    if (m === undefined) return { status: 401, body: { error: "invalid_client" } };
    const token = randomBytes(24).toString("base64url");
    this.tokens.set(token, { merchantId: m.merchantId, exp: this.now() + TOKEN_LIFE_MS });
    return {
      status: 200,
      headers: { "cache-control": "no-store" },
      body: {
        access_token: token,
        token_type: "Bearer",
        expires_in: TOKEN_LIFE_MS / 1000,
        scope: "openid subscriptions",
      },
    };
  }

  private lookup(req: EmuRequest): EmuResponse {
    const auth = req.headers.authorization ?? "";
    const t = this.tokens.get(auth.slice(7).trim());
    const m = t === undefined ? undefined : this.s.merchants.get(t.merchantId);
    if (m === undefined) return UNAUTHORIZED;
    return {
      status: 200,
      body: [
        {
          Id: m.merchantId,
          SubscriptionProviders: m.providers.flatMap((id) => {
            const p = this.s.providers.get(id);
            return p === undefined
              ? []
              : [
                  {
                    SubscriptionProviderId: p.providerId,
                    Name: p.name,
                    HomepageUrl: "https://merchant.example/",
                    CustomerServiceEmail: "support@merchant.example",
                    SelfServicePortalUrl: "https://merchant.example/account",
                    FaqUrl: "https://merchant.example/faq",
                    Status: p.status,
                    Address: "Emulatorvej 1",
                    ZipCode: "8000",
                    City: "Aarhus",
                  },
                ];
          }),
        },
      ],
    };
  }

  private landing(req: EmuRequest): EmuResponse {
    const id = req.query.get("id") ?? "";
    const a = this.s.agreements.get(id);
    const o = this.s.oneOffs.get(id);
    if (a === undefined && o === undefined) return NOT_FOUND;
    const valid = a ? a.status === "Pending" : o?.status === "Requested";
    if (!valid) return { status: 410, body: { message: "the link is no longer valid" } };
    return { status: 200, body: { flow: req.query.get("flow"), id, status: a?.status ?? o?.status } };
  }

  // ---- current interface ------------------------------------------------------------------------------

  private provider(req: EmuRequest, m: SubsMerchant): EmuResponse {
    const parts = req.path.slice(CURRENT_PREFIX.length).split("/");
    const [providerId, ...rest] = parts;
    if (providerId === undefined || !m.providers.includes(providerId)) return NOT_FOUND;
    const ctx: Ctx = { req, merchant: m, deprecated: false };
    const path = rest.join("/");
    const M = req.method;
    if (path === "" && M === "PATCH") return this.patchCallbackUrl(ctx, providerId);
    const auth = /^auth\/(oauth2|basic|apikey)$/.exec(path);
    if (auth?.[1] && M === "PUT") return this.putAuth(ctx, providerId, auth[1]);
    if (path === "agreements" && M === "POST") return this.createAgreement(ctx, providerId);
    if (path === "paymentrequests" && M === "POST") return this.paymentRequests(ctx, providerId);
    let r = /^agreements\/([^/]+)$/.exec(path);
    if (r?.[1]) {
      const a = this.s.agreements.get(r[1]);
      if (a?.providerId !== providerId) return NOT_FOUND;
      if (M === "GET") return { status: 200, body: agreementView(a) };
      if (M === "PATCH") return this.patchAgreement(ctx, providerId, a.id);
      return NOT_FOUND;
    }
    r = /^agreements\/([^/]+)\/paymentrequests\/([^/]+)$/.exec(path);
    if (r?.[1] && r[2]) {
      const p = this.s.payments.get(r[2]);
      if (p === undefined || p.agreementId !== r[1] || p.providerId !== providerId) return NOT_FOUND;
      if (M === "GET") return { status: 200, body: paymentView(p) };
      if (M === "PATCH") return this.patchPayment(ctx, p);
      if (M === "DELETE") {
        this.s.declinePayment(p);
        return { status: 204 };
      }
      return NOT_FOUND;
    }
    r = /^agreements\/([^/]+)\/oneoffpayments$/.exec(path);
    if (r?.[1] && M === "POST") return this.createOneOff(ctx, providerId, r[1]);
    r = /^agreements\/([^/]+)\/oneoffpayments\/([^/]+)(\/capture)?$/.exec(path);
    if (r?.[1] && r[2]) {
      const o = this.s.oneOffs.get(r[2]);
      if (o === undefined || o.agreementId !== r[1] || o.providerId !== providerId) return NOT_FOUND;
      if (r[3] && M === "POST") {
        const body = req.body.length === 0 ? {} : obj(parseJson(req.body), "body");
        this.s.captureOneOff(o, body.amount === undefined ? null : amount(body.amount, "amount"));
        return { status: 204 };
      }
      if (!r[3] && M === "DELETE") {
        this.s.cancelOneOff(o);
        return { status: 204 };
      }
      if (!r[3] && M === "GET") return { status: 200, body: oneOffView(o) };
      return NOT_FOUND;
    }
    r = /^agreements\/([^/]+)\/payments\/([^/]+)\/refunds$/.exec(path);
    if (r?.[1] && r[2] && M === "POST") return this.refund(ctx, providerId, r[1], r[2]);
    r = /^payments\/([^/]+)\/attachment(\/pdf)?$/.exec(path);
    if (r?.[1]) return this.attachment(ctx, providerId, r[1], r[2] !== undefined);
    return NOT_FOUND;
  }

  private patchCallbackUrl(ctx: Ctx, providerId: string): EmuResponse {
    const ops = jsonPatch(parseJson(ctx.req.body));
    const op = ops.find((o) => o.path === "/payment_status_callback_url");
    if (ops.length !== 1 || op === undefined || op.op !== "replace")
      throw new SubsInputError("the only change is replace /payment_status_callback_url");
    const url = httpsUrl(op.value, "payment_status_callback_url");
    const p = this.s.providers.get(providerId);
    if (p === undefined) return NOT_FOUND;
    p.callbackUrl = url;
    if (ctx.deprecated) ctx.merchant.deprecatedCallbackUrl = url;
    return { status: 204 };
  }

  private putAuth(ctx: Ctx, providerId: string, kind: string): EmuResponse {
    const b = obj(parseJson(ctx.req.body), "body");
    const p = this.s.providers.get(providerId);
    if (p === undefined) return NOT_FOUND;
    if (kind === "basic") {
      const username = str(b.username, "username");
      if (username.includes(":")) throw new SubsInputError("username must not contain ':'");
      p.auth = { kind: "basic", username, password: str(b.password, "password") };
    } else if (kind === "apikey") {
      const value = str(b.api_key, "api_key");
      if (!TOKEN68.test(value))
        throw new SubsInputError("api_key must conform to token68 (RFC 7235 section 2.1)");
      p.auth = { kind: "apikey", value };
    } else {
      p.auth = {
        kind: "oauth2",
        tokenUrl: httpsUrl(b.token_url, "token_url"),
        clientId: str(b.client_id, "client_id"),
        clientSecret: str(b.client_secret, "client_secret"),
      };
    }
    return { status: 204 };
  }

  private createAgreement(ctx: Ctx, providerId: string): EmuResponse {
    const input = parseAgreement(parseJson(ctx.req.body), ctx.deprecated);
    const now = this.now();
    const a: Agreement = {
      id: this.s.newId(),
      providerId,
      status: "Pending",
      amount: input.amount,
      currency: input.currency,
      country: input.country,
      plan: input.plan,
      description: input.description,
      frequency: input.frequency,
      externalId: input.externalId,
      expiresAt: now + input.expirationMinutes * 60_000,
      links: input.links,
      mobilePhoneNumber: input.mobilePhoneNumber,
      nextPaymentDate: input.nextPaymentDate,
      disableNotificationManagement: input.disableNotificationManagement,
      phone: null,
      oneOffId: null,
      deprecated: ctx.deprecated,
      createdAt: now,
    };
    this.s.agreements.set(a.id, a);
    const body: Obj = { id: a.id };
    if (input.oneOff) {
      const o = this.newOneOff(providerId, a.id, input.oneOff, now);
      a.oneOffId = o.id;
      this.s.requestOneOff(o);
      body.one_off_payment_id = o.id;
    }
    const q = new URLSearchParams({
      flow: "agreement",
      id: a.id,
      redirectUrl: a.links.userRedirect,
      countryCode: a.country,
    });
    if (a.mobilePhoneNumber) q.set("phone", a.mobilePhoneNumber);
    body.links = [{ rel: "mobile-pay", href: `${origin(ctx.req)}${LANDING_PATH}?${q}` }];
    return { status: 201, body };
  }

  private newOneOff(
    providerId: string,
    agreementId: string,
    input: ReturnType<typeof parseOneOff>,
    now: number,
  ): OneOff {
    return {
      id: this.s.newId(),
      providerId,
      agreementId,
      amount: input.amount,
      captured: 0,
      description: input.description,
      externalId: input.externalId,
      autoReserve: input.autoReserve,
      redirectUrl: input.redirectUrl,
      status: "Requested",
      expiresAt: now + input.expirationMinutes * 60_000,
      executedAt: null,
      instantTransfer: false,
      refunded: 0,
      invoice: input.invoice,
    };
  }

  private patchAgreement(ctx: Ctx, providerId: string, agreementId: string): EmuResponse {
    const a = this.s.agreements.get(agreementId);
    if (a?.providerId !== providerId) return NOT_FOUND;
    const ops = jsonPatch(parseJson(ctx.req.body));
    const changes: (() => void)[] = [];
    let cancel = false;
    for (const op of ops) {
      if (op.op !== "replace") throw new SubsInputError("only op replace is supported");
      switch (op.path) {
        case "/amount": {
          const v = amount(op.value, "amount");
          changes.push(() => {
            a.amount = v;
          });
          break;
        }
        case "/plan": {
          const v = str(op.value, "plan", 30);
          changes.push(() => {
            a.plan = v;
          });
          break;
        }
        case "/description": {
          const v = optStr(op.value, "description", 60);
          changes.push(() => {
            a.description = v;
          });
          break;
        }
        case "/external_id": {
          const v = optStr(op.value, "external_id");
          changes.push(() => {
            a.externalId = v;
          });
          break;
        }
        case "/status":
          if (op.value !== "Canceled" && op.value !== "Cancelled")
            throw new SubsInputError("status can only be replaced by Canceled");
          cancel = true;
          break;
        default:
          throw new SubsInputError(`path ${op.path} cannot be changed`);
      }
    }
    if (a.status !== "Accepted" && a.status !== "Pending") {
      const msg = `agreement is ${a.status}`;
      return ctx.deprecated ? precondition(ctx.req, msg) : conflict(ctx.req, msg);
    }
    if (cancel) {
      if (a.status === "Pending") {
        const msg = "a Pending agreement cannot be canceled; it expires";
        return ctx.deprecated ? precondition(ctx.req, msg) : conflict(ctx.req, msg);
      }
      this.s.cancelAgreement(a, "merchant");
    }
    for (const c of changes) c();
    return { status: 204 };
  }

  private paymentRequests(ctx: Ctx, providerId: string): EmuResponse {
    const list = parseJson(ctx.req.body);
    if (!Array.isArray(list) || list.length === 0)
      throw new SubsInputError("body must be a JSON array of at least one payment request");
    if (list.length > MAX_PAYMENTS) throw new SubsInputError(`at most ${MAX_PAYMENTS} payments per request`);
    const provider = this.s.providers.get(providerId);
    if (!provider?.callbackUrl)
      throw new SubsInputError(
        "set the payment status callback URL of the provider before requesting payments",
      );
    const pending: Obj[] = [];
    const rejected: Obj[] = [];
    const made: SubsPayment[] = [];
    for (const item of list) {
      const ext = typeof item === "object" && item !== null ? (item as Obj).external_id : undefined;
      try {
        const p = parsePayment(item, ctx.deprecated);
        made.push({
          id: this.s.newId(),
          providerId,
          agreementId: p.agreementId,
          amount: p.amount,
          originalAmount: p.amount,
          dueDate: p.dueDate,
          externalId: p.externalId,
          description: p.description,
          graceDays: p.graceDays,
          status: "Received",
          nextRunAt: null,
          executedAt: null,
          instantTransfer: false,
          refunded: 0,
          deprecated: ctx.deprecated,
          invoice: p.invoice,
          receivedAt: this.now(),
        });
      } catch (e: unknown) {
        if (!(e instanceof SubsInputError)) throw e;
        if (ctx.deprecated) throw e;
        rejected.push({ external_id: typeof ext === "string" ? ext : null, error_description: e.message });
      }
    }
    if (ctx.deprecated) {
      for (const p of made) {
        const a = this.s.agreements.get(p.agreementId);
        if (a === undefined || a.providerId !== providerId) return NOT_FOUND;
        const dup = [
          ...this.s.payments.values(),
          ...made.filter((q) => q !== p && made.indexOf(q) < made.indexOf(p)),
        ].some(
          (q) =>
            q.agreementId === p.agreementId &&
            q.dueDate === p.dueDate &&
            q.externalId === p.externalId &&
            q.status !== "Declined" &&
            q.status !== "Rejected",
        );
        if (dup)
          return precondition(
            ctx.req,
            `a payment with external_id ${p.externalId} already exists for ${p.dueDate}`,
          );
      }
    }
    for (const p of made) {
      this.s.receivePayment(p);
      pending.push({ payment_id: p.id, external_id: p.externalId });
    }
    return { status: 202, body: { pending_payments: pending, rejected_payments: rejected } };
  }

  private patchPayment(ctx: Ctx, p: SubsPayment): EmuResponse {
    const ops = jsonPatch(parseJson(ctx.req.body));
    const [op] = ops;
    if (ops.length !== 1 || op === undefined || op.op !== "replace" || op.path !== "/amount")
      throw new SubsInputError("the only change is replace /amount with a lower amount");
    this.s.changeAmount(p, amount(op.value, "amount"));
    return { status: 204 };
  }

  private createOneOff(ctx: Ctx, providerId: string, agreementId: string): EmuResponse {
    const a = this.s.agreements.get(agreementId);
    if (a?.providerId !== providerId) return NOT_FOUND;
    const input = parseOneOff(parseJson(ctx.req.body), false);
    if (a.status !== "Accepted") throw new SubsConflict(`agreement is ${a.status}, not Active`);
    const provider = this.s.providers.get(providerId);
    if (!provider?.callbackUrl)
      throw new SubsInputError(
        "set the payment status callback URL of the provider before requesting payments",
      );
    const o = this.newOneOff(providerId, a.id, input, this.now());
    this.s.requestOneOff(o);
    const q = new URLSearchParams({
      flow: "oneoff",
      id: o.id,
      redirectUrl: input.redirectUrl ?? "",
      countryCode: a.country,
    });
    return {
      status: 201,
      body: { id: o.id, links: [{ rel: "mobile-pay", href: `${origin(ctx.req)}${LANDING_PATH}?${q}` }] },
    };
  }

  private refund(ctx: Ctx, providerId: string, agreementId: string, paymentId: string): EmuResponse {
    const b = obj(parseJson(ctx.req.body), "body");
    const value = b.amount === undefined || b.amount === null ? 0 : amount(b.amount, "amount");
    if (b.amount !== undefined && b.amount !== null && value < 1)
      throw new SubsInputError("amount must be at least 0.01");
    const url = httpsUrl(b.status_callback_url, "status_callback_url");
    const externalId = optStr(b.external_id, "external_id");
    const r = {
      id: this.s.newId(),
      paymentId,
      agreementId,
      amount: value,
      externalId,
      callbackUrl: url,
      status: "Requested" as const,
      statusCode: -1,
    };
    this.s.refund(r, providerId);
    return {
      status: 202,
      body: { id: r.id, amount: formatAmount(r.amount), status_callback_url: url, external_id: externalId },
    };
  }

  private attachment(ctx: Ctx, providerId: string, paymentId: string, pdf: boolean): EmuResponse {
    const p = this.s.payments.get(paymentId);
    const o = this.s.oneOffs.get(paymentId);
    if (!((p && p.providerId === providerId) || (o && o.providerId === providerId))) return NOT_FOUND;
    const M = ctx.req.method;
    const current = this.s.attachments.get(paymentId);
    if (pdf) {
      if (M !== "GET") return NOT_FOUND;
      if (!current?.pdf) return NOT_FOUND;
      return { status: 200, headers: { "content-type": "application/pdf" }, body: pdfOf(current.body) };
    }
    if (M === "PUT") {
      const parsed = parseAttachment(parseJson(ctx.req.body));
      this.s.attachments.set(paymentId, parsed);
      return { status: 204 };
    }
    if (M === "GET") return current ? { status: 200, body: current.body } : NOT_FOUND;
    if (M === "DELETE") {
      if (!current) return NOT_FOUND;
      this.s.attachments.delete(paymentId);
      return { status: 204 };
    }
    return NOT_FOUND;
  }
}

export function agreementView(a: Agreement): Obj {
  return {
    id: a.id,
    status: a.status,
    amount: a.amount === null ? null : amountToJson(a.amount),
    currency: a.currency,
    country_code: a.country,
    plan: a.plan,
    description: a.description,
    frequency: a.frequency,
    external_id: a.externalId,
    next_payment_date: a.nextPaymentDate,
    disable_notification_management: a.disableNotificationManagement,
    one_off_payment_id: a.oneOffId,
  };
}

function paymentView(p: SubsPayment): Obj {
  return {
    payment_id: p.id,
    agreement_id: p.agreementId,
    amount: amountToJson(p.amount),
    due_date: p.dueDate,
    external_id: p.externalId,
    description: p.description,
    grace_period_days: p.graceDays === 0 ? null : p.graceDays,
    status: p.status === "Received" || p.status === "Suspended" ? "Pending" : p.status,
  };
}

function oneOffView(o: OneOff): Obj {
  return {
    id: o.id,
    agreement_id: o.agreementId,
    amount: amountToJson(o.amount),
    captured_amount: amountToJson(o.captured),
    external_id: o.externalId,
    description: o.description,
    status: o.status,
  };
}
