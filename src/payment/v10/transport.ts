import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { Clock } from "../../core/clock.js";
import type { RetryPolicy } from "../retry.js";
import { toPaymentError, type V10Failure } from "./errors.js";
import { exchange, retrying, statusFailure } from "./http.js";
import { MalformedBody } from "./parse.js";
import type { TokenSource } from "./token.js";

/** One V10 call as the flows describe it. */
export interface CallSpec {
  /** Operation name for messages and logs (e.g. `"capture"`). */
  op: string;
  method: "GET" | "POST" | "DELETE";
  /** Path below the base URL, starting with `/v10`, query included. */
  path: string;
  /** JSON body (POST only). */
  body?: unknown;
  /** `x-service-idempotency-key` for the four creating POSTs (pos-v10 §9), reused on every retry. */
  idempotencyKey?: string;
  /** A POST that the service answers like the first call when repeated (capture, cancel: pos-v10 §9). */
  naturallyIdempotent?: boolean;
  /** `CorrelationId` header: one per transaction (pos-v10 §3). */
  correlationId: string;
  /** Non-2xx statuses returned to the caller instead of thrown (e.g. 409 to re-query, 404 after DELETE). */
  accept?: readonly number[];
  /** A poll: sent once, because the caller's poll loop is its retry (budget.ts: one layer, not two). */
  poll?: boolean;
}

export interface CallResult {
  status: number;
  body: unknown;
}

export interface TransportDeps {
  dispatcher: Dispatcher;
  baseUrl: string;
  tokens: TokenSource;
  merchantVat: string;
  clientSystemName: string;
  clientSystemVersion: string;
  /** ms */
  postTimeoutMs: number;
  /** ms */
  getTimeoutMs: number;
  policy: RetryPolicy;
  clock: Clock;
  /**
   * Runs the request deadlines (default: \`clock\`). A test that moves \`clock\` by hand while real HTTP is in
   * flight passes the system clock here, so a deadline measures the exchange, not the test's stepping.
   */
  deadlineClock?: Clock;
  random: () => number;
  logger?: Logger;
}

/**
 * Sends V10 calls with the required headers (pos-v10 §3), timeouts and retries (§12), and one token
 * refresh-and-repeat on 401 (§2). Resolves with 2xx (and accepted) answers; rejects with a PaymentError.
 * A repeatable call gets at most `1 + policy.max` attempts (retry.ts decides, budget.ts counts them); the
 * deadline and the backoff sleeps run on the injected clock, the jitter comes from the injected random.
 */
export class V10Transport {
  private readonly origin: string;
  private readonly prefix: string;

  constructor(private readonly deps: TransportDeps) {
    const url = new URL(deps.baseUrl);
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, "");
  }

  async call(spec: CallSpec, signal?: AbortSignal): Promise<CallResult> {
    const { deps } = this;
    const body = spec.body === undefined ? null : JSON.stringify(spec.body);
    const timeoutMs = spec.method === "GET" ? deps.getTimeoutMs : deps.postTimeoutMs;
    let refreshed = false;
    return retrying<CallResult>(
      {
        op: spec.op,
        method: spec.method,
        hasIdempotencyKey: spec.idempotencyKey !== undefined,
        naturallyIdempotent: spec.naturallyIdempotent === true,
        policy: spec.poll === true ? { ...deps.policy, max: 0 } : deps.policy,
        clock: deps.clock,
        random: deps.random,
        signal,
        onRetry: (attempt, f, delayMs) => this.logRetry(spec, attempt, f, delayMs),
      },
      async () => {
        // Bounded: at most one refresh per call, then a 401 is final (pos-v10 §2).
        for (;;) {
          const token = await deps.tokens.get(signal);
          const r = await exchange(deps.dispatcher, {
            clock: deps.deadlineClock ?? deps.clock,
            origin: this.origin,
            path: this.prefix + spec.path,
            method: spec.method,
            headers: this.headers(spec, token, body !== null),
            body,
            timeoutMs,
            signal,
          });
          if (!r.ok) return { failure: r.failure };
          if (r.status === 401 && !refreshed) {
            refreshed = true;
            deps.tokens.invalidate(token);
            continue;
          }
          if ((r.status >= 200 && r.status < 300) || spec.accept?.includes(r.status)) {
            return { value: { status: r.status, body: r.body } };
          }
          return { failure: statusFailure(r.status, r.body) };
        }
      },
    );
  }

  private headers(spec: CallSpec, token: string, hasBody: boolean): Record<string, string> {
    const h: Record<string, string> = {
      authorization: `Bearer ${token}`,
      "x-service-merchant-vat-number": this.deps.merchantVat,
      "x-service-client-system-name": this.deps.clientSystemName,
      "x-service-client-system-version": this.deps.clientSystemVersion,
      CorrelationId: spec.correlationId,
      accept: "application/json",
    };
    if (hasBody) h["content-type"] = "application/json";
    if (spec.idempotencyKey !== undefined) h["x-service-idempotency-key"] = spec.idempotencyKey;
    return h;
  }

  private logRetry(spec: CallSpec, attempt: number, f: V10Failure, delayMs: number): void {
    const status = f.kind === "status" || f.kind === "malformed" ? f.status : undefined;
    this.deps.logger?.warn(
      { op: spec.op, method: spec.method, attempt, failure: f.kind, status, delayMs },
      "v10 call failed; retrying",
    );
  }
}

/**
 * Applies a parse guard to an answer's body; a body that fails it becomes a PaymentError (`unavailable`,
 * ambiguous when the call was a mutation that may have been applied).
 */
export function readBody<T>(op: string, r: CallResult, mutating: boolean, parse: (body: unknown) => T): T {
  try {
    return parse(r.body);
  } catch (e) {
    if (!(e instanceof MalformedBody)) throw e;
    throw toPaymentError(op, { kind: "malformed", status: r.status, detail: e.message, mutating, cause: e });
  }
}
