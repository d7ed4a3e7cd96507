import type { Clock } from "../core/clock.js";
import { LIMITS } from "./budget.js";
import { FINAL_STATES, type PaymentDriver, type PaymentObservation, type PaymentRef } from "./driver.js";
import { isPaymentError } from "./errors.js";
import { pollRetryDelay } from "./retry.js";

export interface WatchOptions {
  /** Sleeps between polls run on this clock. */
  clock: Clock;
  /** Stops the watch; the iterator then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Stop after yielding an observation for which this returns true (final states always stop). */
  until(obs: PaymentObservation): boolean;
  /** Delay before the first poll, ms (default 0). */
  firstDelayMs?: number;
  /** Delay after a failed poll before any observation gave one, ms (default 1000, pos-v10 §10 minimum). */
  initialPollDelayMs?: number;
  /** Consecutive failed polls tolerated before the last error is thrown (default budget.ts, 10). */
  maxConsecutiveFailures?: number;
  /** Jitter of the wait after a failed poll, in [0, 1) (default Math.random). */
  random?: () => number;
}

/**
 * Polls `driver.status(ref)` and yields each observation, driver-agnostic. Polls are spaced exactly by
 * the last `pollDelayMs` the service gave (seed V10 rule 1, pos-v10 §10: never sooner, and as fast as
 * allowed); after a failed poll the last delay is kept plus jitter (pos-v10 §10 "no response: reuse the
 * last pollDelayInMs"; retry.ts `pollRetryDelay`). Only `unavailable` errors are tolerated, at most
 * `maxConsecutiveFailures` in a row; other errors end the watch. Ends after a final state or when `until`
 * says so.
 */
export async function* watchPayment(
  driver: Pick<PaymentDriver, "status">,
  ref: PaymentRef,
  opts: WatchOptions,
): AsyncGenerator<PaymentObservation, void, undefined> {
  const maxFailures = opts.maxConsecutiveFailures ?? LIMITS.watchFailures;
  const random = opts.random ?? Math.random;
  let delay = opts.initialPollDelayMs ?? 1_000;
  let failures = 0;
  if ((opts.firstDelayMs ?? 0) > 0) await opts.clock.sleep(opts.firstDelayMs ?? 0, opts.signal);
  for (;;) {
    opts.signal?.throwIfAborted();
    let obs: PaymentObservation;
    try {
      obs = await driver.status(ref, opts.signal);
    } catch (e) {
      opts.signal?.throwIfAborted();
      if (!isPaymentError(e, "unavailable") || ++failures >= maxFailures) throw e;
      await opts.clock.sleep(pollRetryDelay(delay, random), opts.signal);
      continue;
    }
    failures = 0;
    delay = obs.pollDelayMs;
    yield obs;
    if (FINAL_STATES.has(obs.state) || opts.until(obs)) return;
    await opts.clock.sleep(delay, opts.signal);
  }
}
