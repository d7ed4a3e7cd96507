import type { Dispatcher } from "undici";
import type { Clock } from "../../core/clock.js";
import { PaymentError } from "../errors.js";
import { decideRetry, type RetryPolicy } from "../retry.js";
import { classifyTransportError, errorCodeOf, toPaymentError, type V10Failure } from "./errors.js";

/**
 * One HTTP exchange and the shared retry loop.
 */

export type Exchange = { ok: true; status: number; body: unknown } | { ok: false; failure: V10Failure };

export interface ExchangeRequest {
  /** Runs the deadline timer (the deadline is an input like every other time, core/clock.ts). */
  clock: Clock;
  origin: string;
  path: string;
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body: string | null;
  /** ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Sends one request and reads the whole answer; never throws. An empty or non-JSON body is `undefined`.
 * The deadline is a timer on the injected clock over the whole exchange (pos-v10 §12), so that a test can
 * measure a hang in virtual time; undici's own header/body timeouts (real time, coarse, ~0.5 s granularity)
 * stay as a backstop one second later.
 */
export async function exchange(dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchange> {
  const caller = req.signal;
  if (caller?.aborted) return { ok: false, failure: { kind: "notSent", detail: "aborted before sending" } };
  const ac = new AbortController();
  let timedOut = false;
  const timer = req.clock.setTimer(req.timeoutMs, () => {
    timedOut = true;
    ac.abort();
  });
  const onAbort = () => ac.abort(caller?.reason);
  caller?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await dispatcher.request({
      origin: req.origin,
      path: req.path,
      method: req.method,
      headers: req.headers,
      body: req.body,
      headersTimeout: req.timeoutMs + 1000,
      bodyTimeout: req.timeoutMs + 1000,
      signal: ac.signal,
    });
    const text = await res.body.text();
    return { ok: true, status: res.statusCode, body: parseJson(text) };
  } catch (e) {
    if (timedOut) {
      return {
        ok: false,
        failure: { kind: "timeout", detail: `no answer within ${req.timeoutMs} ms`, cause: e },
      };
    }
    return { ok: false, failure: classifyTransportError(e) };
  } finally {
    timer.cancel();
    caller?.removeEventListener("abort", onAbort);
  }
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A non-success answer as a failure. */
export function statusFailure(status: number, body: unknown): V10Failure {
  return { kind: "status", status, code: errorCodeOf(body) };
}

export interface RetryContext {
  op: string;
  method: string;
  hasIdempotencyKey: boolean;
  naturallyIdempotent: boolean;
  policy: RetryPolicy;
  clock: Clock;
  random: () => number;
  signal?: AbortSignal;
  /** Called before each backoff sleep (logging). */
  onRetry?: (attempt: number, failure: V10Failure, delayMs: number) => void;
}

/**
 * Runs `attempt` until it succeeds or `decideRetry` says stop; sleeps on `ctx.clock` between attempts.
 * Bounded by `policy.max`. Throws the mapped PaymentError of the last failure.
 */
export async function retrying<T>(
  ctx: RetryContext,
  attempt: () => Promise<{ value: T } | { failure: V10Failure }>,
): Promise<T> {
  for (let n = 1; ; n++) {
    const r = await attempt();
    if ("value" in r) return r.value;
    const f = r.failure;
    if (ctx.signal?.aborted) throw abortedError(ctx.op, f);
    const d = decideRetry(
      {
        attempt: n,
        method: ctx.method,
        outcome: outcomeOf(f),
        hasIdempotencyKey: ctx.hasIdempotencyKey,
        naturallyIdempotent: ctx.naturallyIdempotent,
        policy: ctx.policy,
      },
      ctx.random,
    );
    if (!d.retry) throw toPaymentError(ctx.op, f);
    ctx.onRetry?.(n, f, d.delayMs);
    try {
      await ctx.clock.sleep(d.delayMs, ctx.signal);
    } catch {
      throw abortedError(ctx.op, f);
    }
  }
}

function outcomeOf(f: V10Failure) {
  switch (f.kind) {
    case "status":
      return { kind: "status" as const, status: f.status, code: f.code };
    case "timeout":
      return { kind: "timeout" as const };
    case "malformed":
      // A 2xx with a body we cannot read is not transient: repeating gives the same body.
      return { kind: "status" as const, status: f.status };
    default:
      return { kind: "network" as const };
  }
}

/** The caller gave up: what we know is what the last failure told us (ambiguous unless never sent). */
function abortedError(op: string, last: V10Failure): PaymentError {
  const e = toPaymentError(op, last);
  return new PaymentError(e.code, `${op}: aborted by caller after ${e.message}`, e.details, { cause: e });
}
