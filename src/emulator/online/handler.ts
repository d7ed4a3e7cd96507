import { randomUUID, timingSafeEqual } from "node:crypto";
import type { EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import type { PspClient } from "./model.js";
import type { OnlineService } from "./service.js";
import { OnlineError, UUID } from "./validate.js";
import { merchantView, paymentView } from "./views.js";

const API = "/api/v1/";

function correlation(req: EmuRequest): string {
  const given = req.headers.correlationid;
  return typeof given === "string" && given !== "" && given.length <= 64 ? given : randomUUID();
}

function body(req: EmuRequest): Record<string, unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json")
    throw new OnlineError(415, "UnsupportedMediaType", "Content-Type must be application/json");
  let v: unknown;
  try {
    v = JSON.parse(req.body.toString("utf8"));
  } catch {
    throw new OnlineError(400, "ValidationError", "the body is not valid JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new OnlineError(400, "ValidationError", "the body must be a JSON object");
  return v as Record<string, unknown>;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function client(service: OnlineService, req: EmuRequest): PspClient {
  const id = req.headers["x-gateway-client-id"];
  const secret = req.headers["x-gateway-client-secret"];
  const c = typeof id === "string" ? service.clients.get(id) : undefined;
  if (c === undefined || typeof secret !== "string" || !sameSecret(secret, c.clientSecret))
    throw new OnlineError(
      401,
      "Unauthorized",
      "x-gateway-client-id and x-gateway-client-secret are required and must match",
    );
  return c;
}

function active(service: OnlineService, req: EmuRequest): string {
  const c = client(service, req);
  if (!c.active) throw new OnlineError(403, "Forbidden", "this client is not active");
  return c.clientId;
}

/** The emulator's own test affordances under `/_admin/online/`. */
function adminRoute(
  service: OnlineService,
  admin: { testKey(): unknown },
  req: EmuRequest,
): EmuResponse | null {
  const M = req.method;
  if (req.path === "/_admin/online/callbacks" && M === "GET")
    return { status: 200, body: { callbacks: service.notify.records } };
  if (req.path === "/_admin/online/testkey" && M === "GET") return { status: 200, body: admin.testKey() };
  const toggle = /^\/_admin\/online\/clients\/([^/]+)\/active$/.exec(req.path);
  if (toggle !== null && M === "PUT") {
    // Test affordance: a PSP client switched off (or on again), to see the 403 of an inactive client.
    const c = service.clients.get(decodeURIComponent(toggle[1] ?? ""));
    let on: unknown;
    try {
      const body: unknown = JSON.parse(req.body.toString("utf8"));
      on = typeof body === "object" && body !== null ? (body as Record<string, unknown>).active : undefined;
    } catch {
      on = undefined;
    }
    if (c === undefined) return { status: 404, body: { error: "no such client" } };
    if (typeof on !== "boolean")
      return { status: 400, body: { error: 'body must be {"active": true|false}' } };
    c.active = on;
    return { status: 200, body: { clientId: c.clientId, active: c.active } };
  }
  return null;
}

/** `/api/v1/merchants…`. */
function merchantsApi(service: OnlineService, req: EmuRequest, seg: string[]): EmuResponse | null {
  const [, b, c] = seg;
  const M = req.method;
  if (b === undefined) {
    if (M === "POST")
      return {
        status: 201,
        body: { merchantId: service.createMerchant(active(service, req), body(req)).merchantId },
      };
    if (M === "GET")
      return {
        status: 200,
        body: { merchants: service.merchantList(active(service, req)).map(merchantView) },
      };
    return null;
  }
  if (!UUID.test(b) || c !== undefined) return null;
  if (M === "GET") return { status: 200, body: merchantView(service.merchant(active(service, req), b)) };
  if (M === "DELETE") {
    service.deleteMerchant(active(service, req), b);
    return { status: 204 };
  }
  return null;
}

/** `/api/v1/payments…`. */
async function paymentsApi(
  service: OnlineService,
  req: EmuRequest,
  seg: string[],
): Promise<EmuResponse | null> {
  const [, b, c, d, e] = seg;
  const M = req.method;
  if (b === undefined) {
    if (M !== "POST") return null;
    const p = service.initiate(active(service, req), body(req));
    const origin = new URL(req.url).origin;
    return {
      status: 201,
      body: {
        paymentId: p.paymentId,
        redirectToServiceUrl: `${origin}/online/landing/${p.paymentId}`,
        redirectToServiceAppUrl: `service://online?paymentId=${p.paymentId}`,
      },
    };
  }
  if (!UUID.test(b)) return null;
  if (c === undefined) {
    if (M === "GET") return { status: 200, body: paymentView(service.payment(active(service, req), b)) };
    if (M === "PATCH") {
      service.update(active(service, req), b, body(req));
      return { status: 204 };
    }
    return null;
  }
  if (c === "simulate-user-behavior" && d === undefined && M === "POST")
    return { status: 200, body: await service.simulate(b, body(req)) };
  if (c === "authorizationattempts" && d !== undefined && e === undefined && M === "PATCH") {
    await service.authorizationResult(active(service, req), b, d, body(req));
    return { status: 204 };
  }
  if (d === undefined && M === "POST" && (c === "captures" || c === "cancels" || c === "refunds")) {
    const op = c === "captures" ? "capture" : c === "cancels" ? "cancel" : "refund";
    const { id } = service.operate(active(service, req), b, op, body(req));
    return { status: 200, body: { [`${op}Id`]: id } };
  }
  return null;
}

async function route(
  service: OnlineService,
  admin: { testKey(): unknown },
  req: EmuRequest,
): Promise<EmuResponse | null> {
  const M = req.method;
  const own = adminRoute(service, admin, req);
  if (own !== null) return own;
  if (!req.path.startsWith(API)) return null;
  const seg = req.path.slice(API.length).split("/");
  const [a, b] = seg;
  if (a === "credentials" && b === undefined && M === "GET") {
    const cl = client(service, req);
    return {
      status: 200,
      body: { integratorName: cl.integratorName, clientName: cl.clientName, active: cl.active },
    };
  }
  if (a === "merchants") return merchantsApi(service, req, seg);
  if (a !== "payments") return null;
  return paymentsApi(service, req, seg);
}

/**
 * HTTP side of the online-payment interface (seed 002 §Online payments; methods and paths "not shown": this
 * emulator follows the service's published PSP API paths, see README). Answers null for paths that are not
 * its own.
 */
export function createOnlineHandler(service: OnlineService, admin: { testKey(): unknown }): InterfaceHandler {
  return {
    async handle(req) {
      try {
        const r = await route(service, admin, req);
        if (r === null && req.path.startsWith(API))
          return {
            status: 404,
            body: { code: "NotFound", message: "no such operation", correlationId: correlation(req) },
          };
        return r;
      } catch (e: unknown) {
        if (!(e instanceof OnlineError)) throw e;
        return {
          status: e.status,
          body: {
            code: e.code,
            message: e.message,
            correlationId: correlation(req),
            ...(e.field ? { field: e.field } : {}),
          },
        };
      }
    },
  };
}
