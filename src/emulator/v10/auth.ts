import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { EmuClock, EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";

/** What a verified access token says. */
export interface TokenClaims {
  /** The integrator. */
  clientId: string;
  /** The `merchant_vat` claim as issued (possibly malformed: API calls then answer 1182), or null. */
  merchantVat: string | null;
  /** Expiry, emulator ms since the epoch. */
  exp: number;
}

/** The token endpoint's path on the emulator's origin (pos-v10 §2). */
export const TOKEN_PATH = "/integrator-authentication/connect/token";
/** Token lifetime in seconds, the real service's example (pos-v10 §2). */
const EXPIRES_IN_S = 3700;
const CACHE_LIMIT = 10_000;

function formDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

/**
 * Issues and verifies the emulator's access tokens: HS256 JWTs with `client_id`, optional `merchant_vat` and
 * `exp` (emulator time), signed with a key private to this emulator instance (pos-v10 §2 emulator choice).
 * Verified tokens are cached so that a poll costs one map lookup.
 */
export class TokenService implements InterfaceHandler {
  private readonly key = randomBytes(32);
  private readonly cache = new Map<string, TokenClaims>();

  constructor(
    private readonly clock: Pick<EmuClock, "now">,
    /** clientId → clientSecret of the known integrators. */
    private readonly integrators: ReadonlyMap<string, string>,
  ) {}

  issue(clientId: string, merchantVat: string | null): { token: string; expiresIn: number } {
    const exp = this.clock.now() + EXPIRES_IN_S * 1000;
    const payload: Record<string, unknown> = {
      client_id: clientId,
      scope: "integrator_scope",
      exp: Math.floor(exp / 1000),
    };
    if (merchantVat !== null) payload.merchant_vat = merchantVat;
    const head = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(payload))}`;
    const sig = createHmac("sha256", this.key).update(head).digest("base64url");
    return { token: `${head}.${sig}`, expiresIn: EXPIRES_IN_S };
  }

  /** The claims of a valid, unexpired token, else null. */
  verify(token: string): TokenClaims | null {
    let claims = this.cache.get(token);
    if (claims === undefined) {
      const parsed = this.parse(token);
      if (parsed === null) return null;
      claims = parsed;
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(token, claims);
    }
    return claims.exp > this.clock.now() ? claims : null;
  }

  /** Verifies the `Authorization: Bearer` header of a request. */
  verifyRequest(req: EmuRequest): TokenClaims | null {
    const auth = req.headers.authorization;
    if (typeof auth !== "string" || !auth.startsWith("Bearer ")) return null;
    return this.verify(auth.slice(7).trim());
  }

  private parse(token: string): TokenClaims | null {
    const parts = token.split(".");
    if (parts.length !== 3) return null;
    const [h, p, s] = parts as [string, string, string];
    const expected = createHmac("sha256", this.key).update(`${h}.${p}`).digest();
    const given = Buffer.from(s, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
    } catch {
      return null;
    }
    if (typeof payload !== "object" || payload === null) return null;
    const { client_id, merchant_vat, exp } = payload as Record<string, unknown>;
    if (typeof client_id !== "string" || typeof exp !== "number") return null;
    if (merchant_vat !== undefined && typeof merchant_vat !== "string") return null;
    return { clientId: client_id, merchantVat: merchant_vat ?? null, exp: exp * 1000 };
  }

  /**
   * `POST /integrator-authentication/connect/token`: OAuth 2.0 client credentials (RFC 6749 §4.4) with
   * Basic authentication (or, as RFC 6749 §2.3.1 also allows, `client_id`/`client_secret` form fields when
   * there is no Authorization header) and an optional `merchant_vat` form field (pos-v10 §2). A malformed `merchant_vat`
   * is put in the claim as given, so that API calls with the token answer 1182.
   */
  async handle(req: EmuRequest): Promise<EmuResponse | null> {
    if (req.path !== TOKEN_PATH) return null;
    if (req.method !== "POST") return { status: 405, headers: { allow: "POST" } };
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded")
      return { status: 400, body: { error: "invalid_request" } };
    const form = new URLSearchParams(req.body.toString("utf8"));
    const client =
      req.headers.authorization === undefined
        ? this.formAuth(form)
        : this.basicAuth(req.headers.authorization);
    if (client === null) return { status: 401, body: { error: "invalid_client" } };
    const grant = form.getAll("grant_type");
    if (grant.length !== 1) return { status: 400, body: { error: "invalid_request" } };
    if (grant[0] !== "client_credentials") return { status: 400, body: { error: "unsupported_grant_type" } };
    const vats = form.getAll("merchant_vat");
    if (vats.length > 1 || (vats[0] ?? "").length > 64)
      return { status: 400, body: { error: "invalid_request" } };
    const { token, expiresIn } = this.issue(client, vats[0] ?? null);
    return {
      status: 200,
      headers: { "cache-control": "no-store" },
      body: { access_token: token, expires_in: expiresIn, token_type: "Bearer", scope: "integrator_scope" },
    };
  }

  private formAuth(form: URLSearchParams): string | null {
    const id = form.get("client_id");
    const secret = form.get("client_secret");
    return id === null || secret === null ? null : this.known(id, secret);
  }

  /** The clientId when the secret matches (constant-time), else null. */
  private known(id: string, secretText: string): string | null {
    const known = this.integrators.get(id);
    if (known === undefined) return null;
    const expected = Buffer.from(known);
    const secret = Buffer.from(secretText);
    return expected.length === secret.length && timingSafeEqual(expected, secret) ? id : null;
  }

  private basicAuth(header: string | undefined): string | null {
    if (header === undefined || !header.startsWith("Basic ")) return null;
    const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return null;
    // RFC 6749 §2.3.1: both parts are form-encoded before Basic encoding.
    const id = formDecode(decoded.slice(0, colon));
    const secretText = formDecode(decoded.slice(colon + 1));
    return id === null || secretText === null ? null : this.known(id, secretText);
  }
}
