/**
 * The token endpoint of the subscriptions interface (OpenID Connect / OAuth 2.0 client credentials) and the
 * bearer tokens it issues, which authenticate the merchant on the current interface.
 */
import { randomBytes } from "node:crypto";
import type { EmuRequest, EmuResponse } from "../types.js";
import type { SubsMerchant } from "./model.js";
import type { SubsState } from "./state.js";

/** The token endpoint of the subscriptions interface. */
export const SUBS_TOKEN_PATH = "/subscriptions-auth/connect/token";
const TOKEN_LIFE_MS = 3600_000;

export class SubsTokens {
  private readonly tokens = new Map<string, { merchantId: string; exp: number }>();

  constructor(
    private readonly s: SubsState,
    private readonly now: () => number,
  ) {}

  /** `POST SUBS_TOKEN_PATH`: client credentials in the form or in Basic authentication. */
  issue(req: EmuRequest): EmuResponse {
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

  /** The merchant of the request's unexpired bearer token, or undefined. */
  merchant(req: EmuRequest): SubsMerchant | undefined {
    const auth = req.headers.authorization;
    if (typeof auth !== "string" || !auth.startsWith("Bearer ")) return undefined;
    const t = this.tokens.get(auth.slice(7).trim());
    if (t === undefined || t.exp <= this.now()) return undefined;
    return this.s.merchants.get(t.merchantId);
  }
}
