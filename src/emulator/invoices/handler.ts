import { randomUUID } from "node:crypto";
import type { EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import { consentView } from "./consents.js";
import { detailsView } from "./details.js";
import type { HttpsCallbackClient } from "./https.js";
import type { InvoiceMerchant } from "./model.js";
import type { InvoiceService } from "./service.js";
import { CODES, GUID, InvoiceError, PHONE, toDecimal } from "./validate.js";

const API = "/api/v1/";
const SIM = "/app/usersimulation/";
const ADMIN = "/_admin/invoices/";
/** Path of the InvoiceLink landing page; the `user-redirect` link is `origin + LINK_PATH + id`. */
export const LINK_PATH = "/invoices/link/";

function correlation(req: EmuRequest): string {
  const given = req.headers.correlationid ?? req.headers["correlation-id"];
  return typeof given === "string" && GUID.test(given) ? given : randomUUID();
}

/** The invoice error answer (seed 002 §Invoice error answer). */
function errorAnswer(e: InvoiceError, req: EmuRequest): EmuResponse {
  return {
    status: e.status,
    body: {
      correlation_id: correlation(req),
      error: e.error,
      error_code: e.code,
      error_description: e.message,
    },
  };
}

function input(code: string, message: string, status = 400): never {
  throw new InvoiceError(status, "InputError", code, message);
}

function json(req: EmuRequest): unknown {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") input(CODES.body, "Content-Type must be application/json", 415);
  try {
    return JSON.parse(req.body.toString("utf8"));
  } catch {
    input(CODES.body, "the body is not valid JSON");
  }
}

function object(req: EmuRequest, allowed: readonly string[]): Record<string, unknown> {
  const v = json(req);
  if (typeof v !== "object" || v === null || Array.isArray(v))
    input(CODES.body, "the body must be a JSON object");
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) input(CODES.unknownField, `unknown field ${k.slice(0, 40)}`);
  return o;
}

function origin(req: EmuRequest): string {
  return new URL(req.url).origin;
}

function phoneOf(body: Record<string, unknown>): string {
  const p = body.phoneNumber;
  if (typeof p !== "string" || !PHONE.test(p))
    input(CODES.alias, "phoneNumber must be + country code and number");
  return p;
}

function merchantOf(service: InvoiceService, req: EmuRequest): InvoiceMerchant {
  const auth = req.headers.authorization;
  const m =
    typeof auth === "string" && auth.startsWith("Bearer ")
      ? service.merchantByToken(auth.slice(7).trim())
      : undefined;
  if (m === undefined) input("10000", "a valid bearer access token is required", 401);
  return m;
}

function own(service: InvoiceService, req: EmuRequest, merchantId: string): InvoiceMerchant {
  const m = merchantOf(service, req);
  if (merchantId.toLowerCase() !== m.merchantId)
    input("10003", "the token's merchant is not this merchant", 403);
  return m;
}

function setCallback(
  https: HttpsCallbackClient,
  m: InvoiceMerchant,
  url: unknown,
  authorization: string,
): EmuResponse {
  const why = https.refuse(url);
  if (why !== null) input("10301", `callbackurl ${why}`);
  m.callback = { url: url as string, authorization };
  return { status: 204 };
}

/** `/api/v1/directinvoiceconsents…`. */
function consentsApi(service: InvoiceService, req: EmuRequest, seg: string[]): EmuResponse | null {
  const [, b, c] = seg;
  const M = req.method;
  const m = merchantOf(service, req);
  if (b === undefined && M === "POST") {
    const body = object(req, ["InvoiceId"]);
    return { status: 201, body: consentView(service.consents.create(m, body.InvoiceId)) };
  }
  if (b === undefined && M === "GET") {
    const issuer = req.query.get("InvoiceIssuerId");
    const state = req.query.get("State");
    if (issuer === null || !GUID.test(issuer)) input(CODES.issuer, "InvoiceIssuerId (guid) is required");
    if (state?.toLowerCase() !== "granted") input("10602", "State is required; only granted is supported");
    return { status: 200, body: service.consents.granted(m, issuer, req.query.get("PagingState")) };
  }
  if (b !== undefined && c === undefined && M === "GET")
    return { status: 200, body: consentView(service.consents.get(m, b)) };
  return null;
}

/** `PUT /api/v1/merchants/{id}/auth/basic|apikey`: the merchant's callback and its credentials. */
function authApi(
  service: InvoiceService,
  https: HttpsCallbackClient,
  req: EmuRequest,
  b: string,
  d: string | undefined,
): EmuResponse | null {
  if (d === "basic") {
    const m = own(service, req, b);
    const body = object(req, ["username", "password", "callbackurl"]);
    if (typeof body.username !== "string" || body.username === "" || body.username.includes(":"))
      input("10302", "username is required and has no ':'");
    if (typeof body.password !== "string" || body.password === "") input("10303", "password is required");
    const basic = Buffer.from(`${body.username}:${body.password}`).toString("base64");
    return setCallback(https, m, body.callbackurl, `Basic ${basic}`);
  }
  if (d === "apikey") {
    const m = own(service, req, b);
    const body = object(req, ["ApiKey", "callbackurl"]);
    if (typeof body.ApiKey !== "string" || !/^[A-Za-z0-9\-._~+/]+=*$/.test(body.ApiKey))
      input("10304", "ApiKey is required (token68 characters)");
    return setCallback(https, m, body.callbackurl, body.ApiKey);
  }
  return null;
}

/** `/api/v1/merchants/{id}/invoices…`. */
function invoicesApi(service: InvoiceService, req: EmuRequest, seg: string[]): EmuResponse | null {
  const [, b, , d, e] = seg;
  const M = req.method;
  if (b === undefined) return null;
  const linkBase = `${origin(req)}${LINK_PATH.slice(0, -1)}`;
  if (M === "POST" && (d === undefined || d === "link" || d === "batch")) {
    const m = own(service, req, b);
    const kind = d === "link" ? "link" : "direct";
    const batch = d === "batch" || e === "batch";
    if (e !== undefined && !(d === "link" && e === "batch")) return null;
    if (batch) return { status: 202, body: service.createBatch(m, json(req), kind, linkBase) };
    const inv = service.create(m, json(req), kind, linkBase);
    if (kind === "direct") return { status: 202, body: { InvoiceId: inv.id } };
    return { status: 202, body: { InvoiceId: inv.id, Links: [{ Rel: "user-redirect", Href: inv.href }] } };
  }
  if (d === undefined || seg.length > 5) return null;
  if (M === "PUT" && e === "cancel") {
    service.cancel(own(service, req, b), d);
    return { status: 204 };
  }
  if (M === "GET" && e === undefined) {
    const m = own(service, req, b);
    return { status: 200, body: detailsView(service.invoice(m, d), m) };
  }
  if (M === "GET" && e === "status") {
    const inv = service.invoice(own(service, req, b), d);
    return { status: 200, body: { InvoiceId: inv.id, Status: inv.status } };
  }
  return null;
}

function api(
  service: InvoiceService,
  https: HttpsCallbackClient,
  req: EmuRequest,
  seg: string[],
): EmuResponse | null {
  const [a, b, c, d, e] = seg;
  const M = req.method;
  if (a === "directinvoiceconsents") return consentsApi(service, req, seg);
  if (a !== "merchants" || b === undefined) return null;
  if (b === "me" && c === undefined) {
    if (M !== "GET") return null;
    return { status: 200, body: { MerchantId: merchantOf(service, req).merchantId } };
  }
  if (c === "invoiceissuers" && d === undefined && M === "GET")
    return { status: 200, body: { InvoiceIssuers: own(service, req, b).issuers } };
  if (c === "auth" && M === "PUT" && e === undefined) return authApi(service, https, req, b, d);
  if (c !== "invoices") return null;
  return invoicesApi(service, req, seg);
}

function sim(service: InvoiceService, req: EmuRequest, seg: string[]): EmuResponse | null {
  const [kind, id, action] = seg;
  if (id === undefined || action === undefined || seg.length !== 3) return null;
  if (kind === "invoices") {
    if (req.method !== "POST") return null;
    if (action === "accept") {
      const body = object(req, ["phoneNumber", "paymentDate"]);
      const date =
        body.paymentDate === undefined || body.paymentDate === null ? null : String(body.paymentDate);
      const inv = service.accept(id, phoneOf(body), date);
      return { status: 200, body: { InvoiceId: inv.id, Status: inv.status, PaymentDate: inv.paymentDate } };
    }
    if (action === "reschedule") {
      const body = object(req, ["phoneNumber", "paymentDate"]);
      const inv = service.reschedule(id, phoneOf(body), String(body.paymentDate));
      return { status: 200, body: { InvoiceId: inv.id, Status: inv.status, PaymentDate: inv.paymentDate } };
    }
    if (action === "reject") {
      const inv = service.reject(id, phoneOf(object(req, ["phoneNumber"])));
      return { status: 200, body: { InvoiceId: inv.id, Status: inv.status } };
    }
    return null;
  }
  if (
    kind === "directinvoiceconsents" &&
    req.method === "POST" &&
    (action === "grant" || action === "deny")
  ) {
    const c = service.consents.decide(id, phoneOf(object(req, ["phoneNumber"])), action === "grant");
    return { status: 200, body: consentView(c) };
  }
  return null;
}

function route(service: InvoiceService, https: HttpsCallbackClient, req: EmuRequest): EmuResponse | null {
  const p = req.path;
  if (p.startsWith(API)) return api(service, https, req, p.slice(API.length).split("/"));
  if (p.startsWith(SIM)) return sim(service, req, p.slice(SIM.length).split("/"));
  if (p.startsWith(LINK_PATH) && req.method === "GET") {
    const inv = service.find(p.slice(LINK_PATH.length));
    const m = service.merchants.get(inv.merchantId);
    return {
      status: 200,
      body: {
        InvoiceId: inv.id,
        Status: inv.status,
        TotalAmount: toDecimal(inv.input.TotalAmount),
        CurrencyCode: inv.input.CurrencyCode,
        MerchantName: m?.name ?? null,
        PrefilledPhoneNumber: inv.input.phone,
      },
    };
  }
  if (p === `${ADMIN}callbacks` && req.method === "GET")
    return {
      status: 200,
      body: {
        delivered: service.outbox.delivered,
        pending: service.outbox.pending(),
        failed: service.outbox.failed,
      },
    };
  return null;
}

/**
 * HTTP side of the invoice interface (seed 002 §Endpoints, Invoices), its user simulation
 * (`/app/usersimulation/invoices/…`, `/app/usersimulation/directinvoiceconsents/…`), the InvoiceLink
 * landing page and `/_admin/invoices/callbacks`. Answers null for paths that are not its own, so that the
 * online-payment handler (also under `/api/v1/merchants`) can take them.
 */
export function createInvoicesHandler(service: InvoiceService, https: HttpsCallbackClient): InterfaceHandler {
  return {
    async handle(req) {
      try {
        return route(service, https, req);
      } catch (e: unknown) {
        if (e instanceof InvoiceError) return errorAnswer(e, req);
        return errorAnswer(new InvoiceError(500, "ServerError", "10500", "internal error"), req);
      }
    },
  };
}
