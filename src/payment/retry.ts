/**
 * The one retry decision of the payment clients, as a pure function (stripe-node habit: the policy is data,
 * the decision is a table-testable function, the sleeping happens elsewhere).
 *
 * Rules (pos-v10 §12, reliability.md §2.3):
 * - retry only network errors, timeouts and 5xx; a 4xx is never retried as is;
 * - a timeout or reset does not prove "not applied", so a request is repeated only when repeating it cannot
 *   double its effect: GET/HEAD/PUT/DELETE, a POST that carries its idempotency key, or a POST that is
 *   naturally idempotent (V10 capture and cancel: the same call again answers 200, pos-v10 §9);
 * - at most `policy.max` retries (pos-v10 §12 suggests 2, allows up to 5);
 * - capped exponential backoff with "equal jitter": half the capped delay is fixed, the other half random,
 *   so a retry is never immediate and a fleet of units does not retry in lockstep.
 */

/** Retry limits. All durations in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first call (0–5; default 2, i.e. at most 3 calls). */
  max: number;
  /** Delay before the first retry, before jitter (default 100 ms). */
  baseDelayMs: number;
  /** Upper bound of any delay (default 2000 ms). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  max: 2,
  baseDelayMs: 100,
  maxDelayMs: 2000,
});

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
 * Decides whether to repeat a failed request and after how long.
 * @param random jitter source returning a value in [0, 1) (inject a seeded one in tests).
 */
export function decideRetry(input: RetryInput, random: () => number): RetryDecision {
  const { attempt, outcome, policy } = input;
  if (attempt > policy.max) return NO;
  if (!isTransient(outcome)) return NO;
  if (!isRepeatable(input)) return NO;
  return { retry: true, delayMs: backoffDelay(attempt, policy, random) };
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

/**
 * The delay before retry number `attempt` (1-based), in ms: `d = min(max, base · 2^(attempt-1))`, then
 * `d/2 + random·d/2`, rounded down. Always in [d/2, d].
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(exp / 2 + (r * exp) / 2);
}

export { seededRandom } from "../core/random.js";
