import type { EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import { createAgreement, createOneOff, patchAgreement } from "./agreement-routes.js";
import { amount, isJson, obj, parseJson, SubsInputError } from "./codec.js";
import { badRequest, conflict, NOT_FOUND, serverError, UNAUTHORIZED } from "./errors.js";
import type { SubsMerchant } from "./model.js";
import { cancelOneOff, captureOneOff } from "./oneoff-flow.js";
import { declinePayment } from "./payment-flow.js";
import { attachment, patchPayment, paymentRequests, refund } from "./payment-routes.js";
import { merchantLookup, patchCallbackUrl, putAuth } from "./provider-routes.js";
import { type Ctx, LANDING_PATH } from "./route-ctx.js";
import { SubsConflict, type SubsState } from "./state.js";
import { SUBS_TOKEN_PATH, SubsTokens } from "./token.js";
import { agreementView, oneOffView, paymentView } from "./views.js";

export const CURRENT_PREFIX = "/api/providers/";
export const DEPRECATED_PREFIX = "/api/merchants/me";

/**
 * The routes of both subscriptions interfaces. The current one is reached with a bearer token from
 * SUBS_TOKEN_PATH; the deprecated one (`/api/merchants/me/...`) only through the TLS listener, which
 * verifies the client certificate and the `x-gateway-client-*` headers and passes the merchant in.
 */
export class SubsRoutes implements InterfaceHandler {
  private readonly tokens: SubsTokens;

  constructor(
    private readonly s: SubsState,
    private readonly now: () => number,
  ) {
    this.tokens = new SubsTokens(s, now);
  }

  /** Plain listener: token endpoint, landing page and the current interface. */
  async handle(req: EmuRequest): Promise<EmuResponse | null> {
    if (req.path === SUBS_TOKEN_PATH) return this.tokens.issue(req);
    if (req.path === LANDING_PATH) return this.landing(req);
    if (req.path === DEPRECATED_PREFIX && req.method === "GET")
      return this.current(req, (m) => merchantLookup(this.s, m));
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
    const m = this.tokens.merchant(req);
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

  private ctx(req: EmuRequest, merchant: SubsMerchant, deprecated: boolean): Ctx {
    return { s: this.s, now: this.now, req, merchant, deprecated };
  }

  /** Deprecated interface, called by the TLS listener once the merchant is authenticated. */
  deprecated(req: EmuRequest, merchant: SubsMerchant): EmuResponse {
    if (this.s.systemDeclines.deprecated500 > 0) {
      this.s.systemDeclines.deprecated500 -= 1;
      return serverError(req, "An unexpected error occurred.");
    }
    const ctx = this.ctx(req, merchant, true);
    const rest = req.path.slice(DEPRECATED_PREFIX.length);
    const providerId = merchant.providers[0];
    if (providerId === undefined) return serverError(req, "merchant has no provider");
    return this.guard(req, () => {
      if (rest === "" && req.method === "PATCH") return patchCallbackUrl(ctx, providerId);
      if (rest === "/agreements" && req.method === "POST") return createAgreement(ctx, providerId);
      if (rest === "/agreements" && req.method === "GET")
        return {
          status: 200,
          body: [...this.s.agreements.values()].filter((a) => a.providerId === providerId).map(agreementView),
        };
      const m = /^\/agreements\/([^/]+)$/.exec(rest);
      if (m?.[1] && req.method === "PATCH") return patchAgreement(ctx, providerId, m[1]);
      if (m?.[1] && req.method === "GET") {
        const a = this.s.agreements.get(m[1]);
        return a?.providerId === providerId ? { status: 200, body: agreementView(a) } : NOT_FOUND;
      }
      if (rest === "/paymentrequests" && req.method === "POST") return paymentRequests(ctx, providerId);
      return NOT_FOUND;
    });
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

  /** The current interface: `/api/providers/{providerId}/...` of one of the merchant's providers. */
  private provider(req: EmuRequest, m: SubsMerchant): EmuResponse {
    const parts = req.path.slice(CURRENT_PREFIX.length).split("/");
    const [providerId, ...rest] = parts;
    if (providerId === undefined || !m.providers.includes(providerId)) return NOT_FOUND;
    const ctx = this.ctx(req, m, false);
    const path = rest.join("/");
    const M = req.method;
    if (path === "" && M === "PATCH") return patchCallbackUrl(ctx, providerId);
    const auth = /^auth\/(oauth2|basic|apikey)$/.exec(path);
    if (auth?.[1] && M === "PUT") return putAuth(ctx, providerId, auth[1]);
    if (path === "agreements" && M === "POST") return createAgreement(ctx, providerId);
    if (path === "paymentrequests" && M === "POST") return paymentRequests(ctx, providerId);
    let r = /^agreements\/([^/]+)$/.exec(path);
    if (r?.[1]) {
      const a = this.s.agreements.get(r[1]);
      if (a?.providerId !== providerId) return NOT_FOUND;
      if (M === "GET") return { status: 200, body: agreementView(a) };
      if (M === "PATCH") return patchAgreement(ctx, providerId, a.id);
      return NOT_FOUND;
    }
    r = /^agreements\/([^/]+)\/paymentrequests\/([^/]+)$/.exec(path);
    if (r?.[1] && r[2]) {
      const p = this.s.payments.get(r[2]);
      if (p === undefined || p.agreementId !== r[1] || p.providerId !== providerId) return NOT_FOUND;
      if (M === "GET") return { status: 200, body: paymentView(p) };
      if (M === "PATCH") return patchPayment(ctx, p);
      if (M === "DELETE") {
        declinePayment(this.s, p);
        return { status: 204 };
      }
      return NOT_FOUND;
    }
    r = /^agreements\/([^/]+)\/oneoffpayments$/.exec(path);
    if (r?.[1] && M === "POST") return createOneOff(ctx, providerId, r[1]);
    r = /^agreements\/([^/]+)\/oneoffpayments\/([^/]+)(\/capture)?$/.exec(path);
    if (r?.[1] && r[2]) {
      const o = this.s.oneOffs.get(r[2]);
      if (o === undefined || o.agreementId !== r[1] || o.providerId !== providerId) return NOT_FOUND;
      if (r[3] && M === "POST") {
        const body = req.body.length === 0 ? {} : obj(parseJson(req.body), "body");
        captureOneOff(this.s, o, body.amount === undefined ? null : amount(body.amount, "amount"));
        return { status: 204 };
      }
      if (!r[3] && M === "DELETE") {
        cancelOneOff(this.s, o);
        return { status: 204 };
      }
      if (!r[3] && M === "GET") return { status: 200, body: oneOffView(o) };
      return NOT_FOUND;
    }
    r = /^agreements\/([^/]+)\/payments\/([^/]+)\/refunds$/.exec(path);
    if (r?.[1] && r[2] && M === "POST") return refund(ctx, providerId, r[1], r[2]);
    r = /^payments\/([^/]+)\/attachment(\/pdf)?$/.exec(path);
    if (r?.[1]) return attachment(ctx, providerId, r[1], r[2] !== undefined);
    return NOT_FOUND;
  }
}
