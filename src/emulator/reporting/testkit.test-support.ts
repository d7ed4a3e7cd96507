import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";
import { merchantKeyBytes, paymentStartHmac } from "../../payment/legacy/signing.js";
import { type Emulator, type EmulatorOptions, startEmulator } from "../index.js";
import { signedRequest } from "../legacy/harness.test-support.js";
import type { LedgerEntry, LedgerKind, LedgerSource } from "../types.js";

/** A reporting answer as the tests read it. */
export interface ReportAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or the text for non-JSON answers. */
  body: unknown;
  text: string;
}

/** Tokens from the token endpoint. */
export interface Tokens {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  expires_in: number;
  scope: string;
}

export const REDIRECT_URI = "https://client.example/callback";

/**
 * A reporting client for the emulator's tests: real HTTP on 127.0.0.1, the OpenID Connect login through the
 * authorization and token endpoints, and the three required headers. Test support, not built.
 */
export class ReportingKit {
  readonly agent = new Agent({ connections: 8 });
  tokens: Tokens | null = null;

  private constructor(readonly emu: Emulator) {}

  static async start(options: EmulatorOptions = {}): Promise<ReportingKit> {
    return new ReportingKit(await startEmulator({ pollDelayMs: 10, timeSource: () => 0, ...options }));
  }

  /** A kit on an emulator started elsewhere (e.g. by V10Kit); `close()` then closes only the kit's agent. */
  static on(emu: Emulator): ReportingKit {
    const kit = new ReportingKit(emu);
    kit.ownsEmulator = false;
    return kit;
  }

  private ownsEmulator = true;

  get origin(): string {
    return this.emu.info.v10.baseUrl;
  }

  async raw(
    method: string,
    url: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<ReportAnswer> {
    const res = await request(url, { method: method as "GET", headers, body, dispatcher: this.agent });
    const text = await res.body.text();
    const type = String(res.headers["content-type"] ?? "");
    const parsed: unknown = type.includes("json") && text !== "" ? JSON.parse(text) : text;
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  }

  /** GET authorize; returns the redirect's parameters (fragment or query). */
  async authorize(
    params: Record<string, string>,
  ): Promise<{ status: number; params: URLSearchParams; location: string }> {
    const q = new URLSearchParams({
      client_id: this.emu.info.reporting.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code id_token",
      scope: "openid transactionreporting offline_access",
      nonce: "n-0S6_WzA2Mj",
      state: "af0ifjsldkj",
      ...params,
    });
    const r = await this.raw(
      "GET",
      `${this.origin}/merchant-authentication-openidconnect/connect/authorize?${q}`,
    );
    const location = String(r.headers.location ?? "");
    const at = Math.max(location.indexOf("#"), location.indexOf("?"));
    return { status: r.status, params: new URLSearchParams(at < 0 ? "" : location.slice(at + 1)), location };
  }

  /** POST to the token endpoint with Basic client authentication. */
  token(form: Record<string, string>, secret = this.emu.info.reporting.clientSecret): Promise<ReportAnswer> {
    const basic = Buffer.from(`${this.emu.info.reporting.clientId}:${secret}`).toString("base64");
    return this.raw(
      "POST",
      `${this.origin}/merchant-authentication-openidconnect/connect/token`,
      { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
      new URLSearchParams(form).toString(),
    );
  }

  /** The whole login: authorize (merchant `loginHint`), then exchange the code; keeps the tokens. */
  async login(loginHint?: string): Promise<Tokens> {
    const a = await this.authorize(loginHint === undefined ? {} : { login_hint: loginHint });
    const code = a.params.get("code");
    if (code === null) throw new Error(`authorize failed: ${a.location}`);
    const t = await this.token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI });
    if (t.status !== 200) throw new Error(`token failed: ${t.status} ${t.text}`);
    this.tokens = t.body as Tokens;
    return this.tokens;
  }

  /** Exchanges the refresh token for new tokens (after the gateway said the access token is invalid). */
  async refresh(): Promise<Tokens> {
    const rt = this.tokens?.refresh_token;
    if (rt === undefined) throw new Error("no refresh token");
    const t = await this.token({ grant_type: "refresh_token", refresh_token: rt });
    if (t.status !== 200) throw new Error(`refresh failed: ${t.status} ${t.text}`);
    this.tokens = t.body as Tokens;
    return this.tokens;
  }

  /** The three required headers (seed 002), each replaceable. */
  headers(over: Record<string, string | null> = {}): Record<string, string> {
    const h: Record<string, string | null> = {
      authorization: `Bearer ${this.tokens?.access_token ?? ""}`,
      "x-gateway-client-id": this.emu.info.reporting.clientId,
      "x-gateway-client-secret": this.emu.info.reporting.clientSecret,
      ...over,
    };
    return Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => e[1] !== null));
  }

  /** GET a reporting path (relative to the reporting base URL) with query parameters, URL-encoded. */
  get(
    path: string,
    query: Record<string, string> = {},
    over: Record<string, string | null> = {},
  ): Promise<ReportAnswer> {
    const q = new URLSearchParams(query).toString();
    return this.raw(
      "GET",
      `${this.emu.info.reporting.baseUrl}${path}${q ? `?${q}` : ""}`,
      this.headers(over),
    );
  }

  /** Follows `nextPageToken` to the end; returns every page's body. */
  async walk(path: string, query: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
    const pages: Record<string, unknown>[] = [];
    let token: string | null = null;
    for (let i = 0; i < 1000; i++) {
      const r = await this.get(path, token === null ? query : { ...query, pageToken: token });
      if (r.status !== 200) throw new Error(`page ${i} failed: ${r.status} ${r.text}`);
      const body = r.body as Record<string, unknown>;
      pages.push(body);
      token = typeof body.nextPageToken === "string" ? body.nextPageToken : null;
      if (token === null) return pages;
    }
    throw new Error("more than 1000 pages");
  }

  /** The admin API of the emulator (JSON in, JSON out). */
  async admin(method: string, path: string, body?: unknown): Promise<ReportAnswer> {
    return this.raw(
      method,
      `${this.emu.info.admin}${path}`,
      { "content-type": "application/json" },
      body === undefined ? undefined : JSON.stringify(body),
    );
  }

  /** Calls an older-interface operation over HTTP, signed as the unit's driver signs it (pos-legacy §3). */
  async legacy(operation: string, body: Record<string, unknown>): Promise<ReportAnswer> {
    const req = signedRequest({
      origin: this.emu.info.legacy.baseUrl,
      apiKey: this.emu.info.legacy.apiKey,
      operation,
      body: {
        MerchantId: this.emu.info.legacy.merchantId,
        LocationId: this.emu.info.legacy.locationId,
        ...body,
      },
      nowMs: this.emu.clock.now(),
    });
    const headers = { authorization: String(req.headers.authorization), "content-type": "application/json" };
    return this.raw("POST", req.url, headers, req.body.toString("utf8"));
  }

  /** The PaymentStart HMAC of the older interface under the seeded merchant key. */
  legacyHmac(posId: string, orderId: string, amount: string): string {
    const { merchantId, locationId, merchantKey } = this.emu.info.legacy;
    return paymentStartHmac(merchantKeyBytes(merchantKey), {
      merchantId,
      locationId,
      posId,
      orderId,
      amount,
      bulkRef: "",
    });
  }

  async close(): Promise<void> {
    await this.agent.destroy();
    if (this.ownsEmulator) await this.emu.close();
  }
}

/**
 * Records a money movement of the subscriptions, invoices or online-payments interface directly in the one
 * ledger, exactly as those interfaces record it (the ledger entry is the contract between them and
 * reporting): for reporting's own unit-level tests (api.test.ts: ordering, fees, carried days) that need a
 * precise entry without driving an interface. The one-day acceptance test drives those interfaces' HTTP APIs.
 */
export function recordViaLedger(
  emu: Emulator,
  source: Extract<LedgerSource, "subscriptions" | "invoices" | "online">,
  kind: Extract<LedgerKind, "paid" | "captured" | "refunded">,
  amount: number,
  scope: { merchant: string; point: string; paymentId?: string; orderId?: string },
): LedgerEntry {
  const id = randomUUID();
  return emu.recordLedger({
    interface: source,
    id,
    paymentId: scope.paymentId ?? null,
    orderId: scope.orderId ?? `ext-${id.slice(0, 8)}`,
    kind,
    amount,
    merchant: scope.merchant,
    point: scope.point,
  });
}
