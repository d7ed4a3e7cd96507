import type { Dispatcher } from "undici";
import type { Clock } from "../../core/clock.js";
import { PaymentError } from "../errors.js";
import type { RetryPolicy } from "../retry.js";
import { exchange, retrying, statusFailure } from "./http.js";
import { MalformedBody, parseToken } from "./parse.js";

/** Ten minutes: a real client refreshed this long before expiry (pos-v10 §2). */
const EARLY_REFRESH_MS = 10 * 60_000;

export interface TokenSourceDeps {
  dispatcher: Dispatcher;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  merchantVat: string;
  timeoutMs: number;
  policy: RetryPolicy;
  clock: Clock;
  /**
   * Runs the request deadlines (default: \`clock\`). A test that moves \`clock\` by hand while real HTTP is in
   * flight passes the system clock here, so a deadline measures the exchange, not the test's stepping.
   */
  deadlineClock?: Clock;
  random: () => number;
}

/**
 * OAuth 2.0 client-credentials tokens (RFC 6749 §4.4, pos-v10 §2): form body with `merchant_vat`, Basic
 * auth; cached and refreshed `min(10 min, lifetime/2)` before expiry; concurrent callers share one fetch.
 * The secret lives only in the prepared Authorization header and never reaches a message or a log.
 */
export class TokenSource {
  private current: { value: string; refreshAt: number } | null = null;
  private inflight: Promise<string> | null = null;
  private readonly origin: string;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly form: string;

  constructor(private readonly deps: TokenSourceDeps) {
    const url = new URL(deps.tokenUrl);
    this.origin = url.origin;
    this.path = `${url.pathname}${url.search}`;
    // RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
    const basic = Buffer.from(
      `${encodeURIComponent(deps.clientId)}:${encodeURIComponent(deps.clientSecret)}`,
    ).toString("base64");
    this.headers = {
      authorization: `Basic ${basic}`,
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    this.form = new URLSearchParams({
      grant_type: "client_credentials",
      merchant_vat: deps.merchantVat,
    }).toString();
  }

  /** A valid access token, fetching one when none is cached or the cached one is due for refresh. */
  get(signal?: AbortSignal): Promise<string> {
    const c = this.current;
    if (c && this.deps.clock.now() < c.refreshAt) return Promise.resolve(c.value);
    if (!this.inflight) {
      this.inflight = this.fetch(signal).finally(() => {
        this.inflight = null;
      });
    }
    return this.inflight;
  }

  /** Drops `stale` after the service refused it (401); a newer token fetched meanwhile is kept. */
  invalidate(stale: string): void {
    if (this.current?.value === stale) this.current = null;
  }

  private async fetch(signal?: AbortSignal): Promise<string> {
    const { deps } = this;
    const token = await retrying<{ accessToken: string; expiresInS: number }>(
      {
        op: "token",
        method: "POST",
        hasIdempotencyKey: false,
        naturallyIdempotent: true, // issuing a token changes nothing at the service
        policy: deps.policy,
        clock: deps.clock,
        random: deps.random,
        signal,
      },
      async () => {
        const r = await exchange(deps.dispatcher, {
          clock: deps.deadlineClock ?? deps.clock,
          origin: this.origin,
          path: this.path,
          method: "POST",
          headers: this.headers,
          body: this.form,
          timeoutMs: deps.timeoutMs,
          signal,
        });
        if (!r.ok) return { failure: r.failure };
        if (r.status === 400 || r.status === 401) {
          throw new PaymentError("unauthorized", `token: HTTP ${r.status}`, { status: r.status });
        }
        if (r.status !== 200) return { failure: statusFailure(r.status, r.body) };
        try {
          return { value: parseToken(r.body) };
        } catch (e) {
          if (!(e instanceof MalformedBody)) throw e;
          return {
            failure: {
              kind: "malformed" as const,
              status: r.status,
              detail: e.message,
              mutating: false,
              cause: e,
            },
          };
        }
      },
    );
    const lifetimeMs = token.expiresInS * 1000;
    const now = deps.clock.now();
    this.current = {
      value: token.accessToken,
      refreshAt: now + lifetimeMs - Math.min(EARLY_REFRESH_MS, lifetimeMs / 2),
    };
    return token.accessToken;
  }
}
