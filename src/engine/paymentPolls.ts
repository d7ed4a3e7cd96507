import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { PaymentDriver, PaymentObservation, PaymentRef } from "../payment/driver.js";
import { pollRetryDelay } from "../payment/retry.js";
import { watchPayment } from "../payment/watch.js";

/**
 * Polls a payment at the service's pace (watchPayment) and hands each observation to `onUpdate` until the
 * payment leaves pending/issued, the signal aborts, or the watch gives up. A watch that gives up leaves the
 * payment timer running: it ends in a cancel, never in a vend.
 */
export async function pollPayment(
  deps: { payment: PaymentDriver; clock: Clock; logger: Logger; random: () => number },
  ref: PaymentRef,
  signal: AbortSignal,
  onUpdate: (obs: PaymentObservation) => void,
): Promise<void> {
  try {
    const polls = watchPayment(deps.payment, ref, {
      clock: deps.clock,
      random: deps.random,
      signal,
      until: (obs) => obs.state !== "pending" && obs.state !== "issued",
    });
    for await (const obs of polls) onUpdate(obs);
  } catch (err) {
    if (!signal.aborted) deps.logger.warn({ err, orderId: ref.orderId }, "payment watch ended");
  }
}

/**
 * Check-in first, `poll` mode: polls the check-in query while the QR code is shown, spaced by the service's
 * poll delay (at least one second, seed: polling at most once per second), until a customer checked in.
 * After a failed poll the delay is kept, plus jitter (retry.ts `pollRetryDelay`).
 */
export async function pollCheckin(
  deps: { payment: PaymentDriver; clock: Clock; logger: Logger; random: () => number },
  signal: AbortSignal,
  onCheckin: () => void,
): Promise<void> {
  let delay = 0;
  /** The service's last poll delay (the base of the wait after a failure, which must not compound). */
  let serviceDelay = 1000;
  while (!signal.aborted) {
    try {
      if (delay > 0) await deps.clock.sleep(delay, signal);
      const obs = await deps.payment.checkin(signal);
      serviceDelay = Math.max(obs.pollDelayMs, 1000);
      delay = serviceDelay;
      if (obs.checkedIn && !signal.aborted) {
        onCheckin();
        return;
      }
    } catch (err) {
      if (signal.aborted) return;
      delay = pollRetryDelay(serviceDelay, deps.random);
      deps.logger.warn({ err }, "check-in poll failed");
    }
  }
}
