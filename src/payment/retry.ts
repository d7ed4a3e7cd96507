/**
 * The one place where a payment client decides to try again and how long to wait first (stripe-node habit:
 * the policy is data, the decision is a table-testable function, the sleeping happens elsewhere on an
 * injected clock, and the jitter comes from an injected random source). How many attempts each layer may
 * make is written down in budget.ts.
 *
 * Rules (pos-v10 §12, reliability.md §2.3):
 * - the transport retries only network errors, timeouts and 5xx; a 4xx is never retried as is;
 * - a timeout or reset does not prove "not applied", so a request is repeated only when repeating it cannot
 *   double its effect: GET/HEAD/PUT/DELETE, a POST that carries its idempotency key, or a POST that is
 *   naturally idempotent (V10 capture and cancel: the same call again answers 200, pos-v10 §9);
 * - a loop above the transport (an older-interface resend after a status query, a poll loop) repeats only
 *   within its own budget, and waits a jittered backoff first;
 * - capped exponential backoff with "equal jitter": half the capped delay is fixed, the other half random,
 *   so a retry is never immediate and a fleet of units does not retry in lockstep.
 */

/** How long to wait before repeating. All durations in milliseconds. */
export interface Backoff {
  /** Delay before the first repeat, before jitter (default 100 ms). */
  baseDelayMs: number;
  /** Upper bound of any delay (default 2000 ms). */
  maxDelayMs: number;
}

/** Transport retry limits. All durations in milliseconds. */
export interface RetryPolicy extends Backoff {
  /** Retries after the first call (0–5; default 2, i.e. at most 3 calls). */
  max: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  max: 2,
  baseDelayMs: 100,
  maxDelayMs: 2000,
});

/** pos-v10 §12: at most 5 retries (6 calls). */
export const MAX_RETRIES = 5;

/** How one attempt failed. */
export interface AttemptOutcome {
  /** `network`: connection refused/reset, socket closed; `timeout`: no answer in time; `status`: an HTTP answer. */
  kind: "network" | "timeout" | "status";
  /** HTTP status, for `kind: "status"`. */
  status?: number;
  /** The service's error code, when the answer had one. */
  code?: string;
}

export interface RetryInput {
  /** The attempt that just failed, 1-based (1 = the first call). */
  attempt: number;
  /** HTTP method of the request (upper case). */
  method: string;
  outcome: AttemptOutcome;
  /** True when the request carries an idempotency key that is reused on the retry. */
  hasIdempotencyKey: boolean;
  /** True for a POST whose repetition the service answers like the first call (V10 capture, cancel). */
  naturallyIdempotent?: boolean;
  policy: RetryPolicy;
}

export type RetryDecision = { retry: false } | { retry: true; delayMs: number };

const NO: RetryDecision = Object.freeze({ retry: false });

/** Methods that HTTP defines as idempotent (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

/**
 * The transport's decision: repeat a failed request, and after how long? At most `1 + policy.max` calls.
 * @param random jitter source returning a value in [0, 1) (inject a seeded one in tests).
 */
export function decideRetry(input: RetryInput, random: () => number): RetryDecision {
  const { outcome, policy } = input;
  if (!isTransient(outcome)) return NO;
  if (!isRepeatable(input)) return NO;
  return decideRepeat({ attempt: input.attempt, limit: 1 + clampRetries(policy.max) }, policy, random);
}

/** A loop's attempt that just ended without a usable answer, and the loop's budget. */
export interface RepeatInput {
  /** The attempt that just ended, 1-based. */
  attempt: number;
  /** Attempts the loop may make in all (its row in budget.ts). */
  limit: number;
}

/**
 * The decision of a loop above the transport, whose caller has already established that another attempt
 * is safe (an older-interface resend after a lost answer, pos-legacy §11): another attempt while the budget
 * lasts, after a jittered backoff.
 */
export function decideRepeat(input: RepeatInput, backoff: Backoff, random: () => number): RetryDecision {
  if (!Number.isSafeInteger(input.attempt) || input.attempt < 1) return NO;
  if (input.attempt >= input.limit) return NO;
  return { retry: true, delayMs: backoffDelay(input.attempt, backoff, random) };
}

/** Network errors, timeouts and 5xx other than 501/505 (which a repetition will not fix). */
export function isTransient(outcome: AttemptOutcome): boolean {
  if (outcome.kind !== "status") return true;
  const s = outcome.status ?? 0;
  return s >= 500 && s <= 599 && s !== 501 && s !== 505;
}

function isRepeatable(input: RetryInput): boolean {
  const method = input.method.toUpperCase();
  if (IDEMPOTENT_METHODS.has(method)) return true;
  return input.hasIdempotencyKey || input.naturallyIdempotent === true;
}

/** Retries per request, clamped to 0–5 (pos-v10 §12). */
export function clampRetries(max: number): number {
  return Number.isFinite(max) ? Math.min(MAX_RETRIES, Math.max(0, Math.floor(max))) : 0;
}

/**
 * The delay before repeat number `attempt` (1-based), in ms: `d = min(max, base · 2^(attempt-1))`, then
 * `d/2 + random·d/2`, rounded down. Always in [d/2, d].
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number): number {
  const exp = cappedDelay(attempt, backoff);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(exp / 2 + (r * exp) / 2);
}

/** The upper bound `d` of `backoffDelay(attempt)`: `min(max, base · 2^(attempt-1))`. */
export function cappedDelay(attempt: number, backoff: Backoff): number {
  return Math.min(backoff.maxDelayMs, backoff.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * The wait after a failed poll (pos-v10 §10: "no response to a poll: reuse the last pollDelayInMs"): never
 * sooner than the service allows, plus up to half of it at random so that units do not poll in lockstep.
 * In [last, last + ⌊last/2⌋].
 */
export function pollRetryDelay(lastPollDelayMs: number, random: () => number): number {
  const d = Math.max(0, lastPollDelayMs);
  const r = Math.min(Math.max(random(), 0), 0.999_999);
  return d + Math.floor((r * d) / 2);
}

export { seededRandom } from "../core/random.js";
