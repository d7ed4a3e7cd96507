import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { EmuClock, EmuRequest, EmuResponse } from "../types.js";

/** Path prefix of the merchant OpenID Connect provider (seed 002 "Authentication": discovery document). */
export const OIDC_BASE = "/merchant-authentication-openidconnect";
export const DISCOVERY_PATH = `${OIDC_BASE}/.well-known/openid-configuration`;
export const JWKS_PATH = `${DISCOVERY_PATH}/jwks`;
export const AUTHORIZE_PATH = `${OIDC_BASE}/connect/authorize`;
export const TOKEN_PATH = `${OIDC_BASE}/connect/token`;

/** The scope that grants the reporting interface (seed 002). */
export const REPORTING_SCOPE = "transactionreporting";
/** Access tokens live 3600 s, refresh tokens 30 days, authorization codes 300 s (emulator time; choices). */
export const ACCESS_TTL_S = 3600;
export const REFRESH_TTL_MS = 30 * 24 * 3600_000;
const CODE_TTL_MS = 300_000;
const SUPPORTED_SCOPES = ["openid", REPORTING_SCOPE, "offline_access"];

/** What an access token grants. */
export interface Grant {
  clientId: string;
  merchantId: string;
  scopes: string[];
}

interface Stored extends Grant {
  exp: number;
}

interface Code extends Stored {
  redirectUri: string;
}

function token(): string {
  return randomBytes(32).toString("base64url");
}

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString("base64url");
}

function originOf(req: EmuRequest): string {
  return new URL(req.url).origin;
}

function formDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

/** A JSON error answer of the OAuth endpoints (RFC 6749 §5.2). */
function oauthError(status: number, error: string, description: string): EmuResponse {
  return {
    status,
    headers: { "cache-control": "no-store" },
    body: { error, error_description: description },
  };
}

/**
 * The merchant side of OpenID Connect for transaction reporting (seed 002 "Authentication"): discovery, the
 * authorization endpoint (hybrid flow `code id_token`, or `code`), and the token endpoint with the
 * `authorization_code` and `refresh_token` grants. The merchant's consent is simulated: the authorization
 * endpoint grants at once for the merchant named by `login_hint` (default: the seeded merchant) and redirects
 * back. Clients are the emulator's integrators (an integrator has access to reporting automatically).
 */
export class MerchantAuth {
  private readonly codes = new Map<string, Code>();
  private readonly access = new Map<string, Stored>();
  private readonly refresh = new Map<string, Stored>();

  constructor(
    private readonly clock: Pick<EmuClock, "now">,
    private readonly clients: ReadonlyMap<string, string>,
    private readonly merchantKnown: (merchantId: string) => boolean,
    private readonly defaultMerchant: string,
  ) {}

  /** The client id when the id/secret pair is known (constant-time secret comparison), else null. */
  client(id: string | undefined, secret: string | undefined): string | null {
    if (id === undefined || secret === undefined) return null;
    const known = this.clients.get(id);
    if (known === undefined) return null;
    const a = Buffer.from(known);
    const b = Buffer.from(secret);
    return a.length === b.length && timingSafeEqual(a, b) ? id : null;
  }

  /** The grant of a valid, unexpired access token, else null. */
  verify(accessToken: string): Grant | null {
    const g = this.access.get(accessToken);
    if (g === undefined) return null;
    if (g.exp <= this.clock.now()) {
      this.access.delete(accessToken);
      return null;
    }
    return g;
  }

  /** Answers the provider's paths, or null for any other path. */
  handle(req: EmuRequest): EmuResponse | null {
    switch (req.path) {
      case DISCOVERY_PATH:
        return req.method === "GET" ? this.discovery(req) : { status: 405, headers: { allow: "GET" } };
      case JWKS_PATH:
        return req.method === "GET"
          ? { status: 200, body: { keys: [] } }
          : { status: 405, headers: { allow: "GET" } };
      case AUTHORIZE_PATH:
        return req.method === "GET" ? this.authorize(req) : { status: 405, headers: { allow: "GET" } };
      case TOKEN_PATH:
        return req.method === "POST" ? this.tokenEndpoint(req) : { status: 405, headers: { allow: "POST" } };
      default:
        return null;
    }
  }

  private discovery(req: EmuRequest): EmuResponse {
    const origin = originOf(req);
    return {
      status: 200,
      body: {
        issuer: `${origin}${OIDC_BASE}`,
        authorization_endpoint: `${origin}${AUTHORIZE_PATH}`,
        token_endpoint: `${origin}${TOKEN_PATH}`,
        jwks_uri: `${origin}${JWKS_PATH}`,
        scopes_supported: SUPPORTED_SCOPES,
        response_types_supported: ["code id_token", "code"],
        response_modes_supported: ["fragment", "query"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["HS256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        claims_supported: ["sub", "iss", "aud", "exp", "iat", "nonce", "c_hash"],
      },
    };
  }

  /** GET authorize: errors before a trustworthy redirect_uri are answered 400; later ones are redirected. */
  private authorize(req: EmuRequest): EmuResponse {
    const q = req.query;
    const clientId = q.get("client_id");
    const redirectUri = q.get("redirect_uri");
    if (clientId === null || !this.clients.has(clientId))
      return oauthError(400, "invalid_client", "client_id is missing or unknown");
    if (redirectUri === null || !/^https?:\/\/[^\s#]+$/.test(redirectUri))
      return oauthError(
        400,
        "invalid_request",
        "redirect_uri must be an absolute http(s) URL without fragment",
      );
    const responseType = (q.get("response_type") ?? "").split(" ").filter(Boolean).sort().join(" ");
    const hybrid = responseType === "code id_token";
    const mode = q.get("response_mode") ?? (hybrid ? "fragment" : "query");
    const back = (params: Record<string, string>): EmuResponse => {
      const state = q.get("state");
      const p = new URLSearchParams(state === null ? params : { ...params, state });
      const sep = mode === "query" ? (redirectUri.includes("?") ? "&" : "?") : "#";
      return { status: 302, headers: { location: `${redirectUri}${sep}${p.toString()}` } };
    };
    if (mode !== "query" && mode !== "fragment")
      return oauthError(400, "invalid_request", "response_mode must be fragment or query");
    if (!hybrid && responseType !== "code")
      return back({
        error: "unsupported_response_type",
        error_description: "use code id_token (hybrid) or code",
      });
    const scopes = (q.get("scope") ?? "").split(" ").filter(Boolean);
    const unknown = scopes.find((s) => !SUPPORTED_SCOPES.includes(s));
    if (unknown !== undefined || !scopes.includes("openid") || !scopes.includes(REPORTING_SCOPE))
      return back({
        error: "invalid_scope",
        error_description: "scope must hold openid and transactionreporting",
      });
    const nonce = q.get("nonce") || null;
    if (hybrid && nonce === null)
      return back({ error: "invalid_request", error_description: "nonce is required in the hybrid flow" });
    const merchantId = q.get("login_hint") ?? this.defaultMerchant;
    if (!this.merchantKnown(merchantId))
      return back({ error: "access_denied", error_description: "no such merchant to grant consent" });
    const now = this.clock.now();
    this.purge(now);
    const code = token();
    this.codes.set(code, { clientId, merchantId, scopes, exp: now + CODE_TTL_MS, redirectUri });
    const params: Record<string, string> = { code, scope: scopes.join(" ") };
    if (hybrid) params.id_token = this.idToken(req, clientId, merchantId, nonce, code);
    return back(params);
  }

  /** An id token, HS256-signed with the client secret (OIDC Core §10.1), with c_hash for the hybrid flow. */
  private idToken(
    req: EmuRequest,
    clientId: string,
    sub: string,
    nonce: string | null,
    code: string | null,
  ): string {
    const now = Math.floor(this.clock.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: `${originOf(req)}${OIDC_BASE}`,
      sub,
      aud: clientId,
      iat: now,
      exp: now + ACCESS_TTL_S,
    };
    if (nonce !== null) claims.nonce = nonce;
    if (code !== null) claims.c_hash = b64url(createHash("sha256").update(code).digest().subarray(0, 16));
    const head = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
    const secret = this.clients.get(clientId) ?? "";
    return `${head}.${createHmac("sha256", secret).update(head).digest("base64url")}`;
  }

  private tokenEndpoint(req: EmuRequest): EmuResponse {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded")
      return oauthError(400, "invalid_request", "the body must be application/x-www-form-urlencoded");
    const form = new URLSearchParams(req.body.toString("utf8"));
    const clientId = this.authenticate(req, form);
    if (clientId === null) return oauthError(401, "invalid_client", "client authentication failed");
    const grants = form.getAll("grant_type");
    if (grants.length !== 1) return oauthError(400, "invalid_request", "exactly one grant_type is required");
    const now = this.clock.now();
    this.purge(now);
    let granted: Stored;
    let withId = false;
    if (grants[0] === "authorization_code") {
      const code = form.get("code") ?? "";
      const c = this.codes.get(code);
      this.codes.delete(code);
      if (c === undefined || c.exp <= now || c.clientId !== clientId)
        return oauthError(
          400,
          "invalid_grant",
          "authorization code unknown, used, expired or of another client",
        );
      if (form.get("redirect_uri") !== c.redirectUri)
        return oauthError(400, "invalid_grant", "redirect_uri differs from the authorization request's");
      granted = c;
      withId = true;
    } else if (grants[0] === "refresh_token") {
      const rt = form.get("refresh_token") ?? "";
      const r = this.refresh.get(rt);
      if (r === undefined || r.exp <= now || r.clientId !== clientId)
        return oauthError(400, "invalid_grant", "refresh token unknown, used, expired or of another client");
      // Rotation: a refresh token is good for one exchange.
      this.refresh.delete(rt);
      granted = r;
    } else {
      return oauthError(400, "unsupported_grant_type", "use authorization_code or refresh_token");
    }
    const grant: Grant = { clientId, merchantId: granted.merchantId, scopes: granted.scopes };
    const accessToken = token();
    this.access.set(accessToken, { ...grant, exp: now + ACCESS_TTL_S * 1000 });
    const body: Record<string, unknown> = {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_S,
      scope: grant.scopes.join(" "),
    };
    if (grant.scopes.includes("offline_access")) {
      const refreshToken = token();
      this.refresh.set(refreshToken, { ...grant, exp: now + REFRESH_TTL_MS });
      body.refresh_token = refreshToken;
    }
    if (withId) body.id_token = this.idToken(req, clientId, grant.merchantId, null, null);
    return { status: 200, headers: { "cache-control": "no-store" }, body };
  }

  /** Basic (RFC 6749 §2.3.1, form-encoded parts) or, without an Authorization header, form fields. */
  private authenticate(req: EmuRequest, form: URLSearchParams): string | null {
    const header = req.headers.authorization;
    if (header === undefined) {
      return this.client(form.get("client_id") ?? undefined, form.get("client_secret") ?? undefined);
    }
    if (!header.startsWith("Basic ")) return null;
    const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return null;
    const id = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    return id === null || secret === null ? null : this.client(id, secret);
  }

  /** Drops expired codes and tokens (bounded memory over long runs). */
  private purge(now: number): void {
    for (const map of [this.codes, this.access, this.refresh] as Map<string, Stored>[]) {
      for (const [k, v] of map) if (v.exp <= now) map.delete(k);
    }
  }
}
