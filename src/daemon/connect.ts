import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { RecoveryReport } from "../engine/recovery.js";
import { JournalError } from "../journal/journal.js";
import type { PosIdentity } from "../payment/driver.js";
import { PaymentError } from "../payment/errors.js";
import { backoffDelay } from "../payment/retry.js";
import type { StatusReason } from "./status.js";

/** How the daemon waits between attempts to reach the service (or to re-check the journal). All ms. */
export interface ConnectPolicy {
  /** First delay after a failure that can heal by itself (unreachable, 5xx, timeout, disk full). */
  baseDelayMs: number;
  /** Cap of that delay, which doubles per failure (with equal jitter: each delay is in [d/2, d]). */
  maxDelayMs: number;
  /** Delay after a refusal that only a config change fixes (credentials, unknown store): slow, jittered. */
  refusedDelayMs: number;
}

/**
 * 1 s doubling to 1 min: a unit comes back soon after a short outage, a fleet of units does not hammer a
 * service that is down, and jitter spreads their retries. A refusal is retried every 2.5-5 minutes, so a
 * fixed credential is picked up without a restart.
 */
export const DEFAULT_CONNECT_POLICY: ConnectPolicy = Object.freeze({
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  refusedDelayMs: 300_000,
});

export interface ConnectDeps {
  clock: Clock;
  /** Jitter source in [0, 1). */
  random: () => number;
  signal: AbortSignal;
  logger: Logger;
  policy: ConnectPolicy;
  /** Brings the PoS into service at the payment service (PaymentDriver.open). */
  open(signal: AbortSignal): Promise<PosIdentity>;
  /** Settles what the journal left unresolved (recoverSessions). */
  recover(): Promise<RecoveryReport>;
  /** Every failed attempt: why the unit stays out of service, and when the next attempt is. */
  onSetback(reason: StatusReason): void;
}

/**
 * Reaches the payment service and settles every session the journal left unresolved, retrying until both
 * succeed: the daemon stays up and out of service meanwhile instead of exiting (and being restarted in a
 * loop by systemd). A session that waits for the service keeps the unit out of service: the VMC is never
 * enabled while one is unresolved. Resolves with the PoS identity, or null when `signal` aborts first.
 */
export async function connectService(deps: ConnectDeps): Promise<PosIdentity | null> {
  const { clock, logger, policy, signal } = deps;
  let failures = 0;
  while (!signal.aborted) {
    let setback: { reason: Omit<StatusReason, "retryAt">; slow: boolean; err?: unknown };
    try {
      const identity = await deps.open(signal);
      const report = await deps.recover();
      const waiting = waitingSales(report);
      if (waiting === null) return identity;
      setback = { reason: { code: "paymentUnreachable", detail: waiting }, slow: false };
    } catch (err) {
      if (signal.aborted) break;
      setback = classify(err);
    }
    failures = setback.slow ? 0 : failures + 1;
    const delay = setback.slow
      ? backoffDelay(
          1,
          { baseDelayMs: policy.refusedDelayMs, maxDelayMs: policy.refusedDelayMs },
          deps.random,
        )
      : backoffDelay(failures, policy, deps.random);
    const reason: StatusReason = { ...setback.reason, retryAt: clock.now() + delay };
    logger.warn({ reason: reason.code, detail: reason.detail, retryInMs: delay }, "out of service");
    if (setback.err !== undefined) logger.debug({ err: setback.err }, "attempt failed");
    deps.onSetback(reason);
    try {
      await clock.sleep(delay, signal);
    } catch {
      break;
    }
  }
  return null;
}

/** Why an attempt failed, in status terms, and whether only a config change can fix it (slow retries). */
export function classify(err: unknown): {
  reason: Omit<StatusReason, "retryAt">;
  slow: boolean;
  err: unknown;
} {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof PaymentError) {
    if (err.code === "unavailable") {
      return {
        reason: { code: "paymentUnreachable", detail: `payment service unreachable: ${message}` },
        slow: false,
        err,
      };
    }
    return {
      reason: {
        code: "paymentRefused",
        detail: `payment service refused this unit (${err.code}): ${message}`,
      },
      slow: true,
      err,
    };
  }
  if (err instanceof JournalError) {
    return { reason: { code: "journal", detail: `journal write failed: ${message}` }, slow: false, err };
  }
  // Not a payment or journal error: a defect. Out of service, retried slowly, never a crash loop.
  return { reason: { code: "failure", detail: `start-up failed: ${message}` }, slow: true, err };
}

/**
 * What keeps the unit out of service after a recovery: sessions that wait for the payment service (it could
 * not be asked, or gave no definite answer). Null when none: sessions the service contradicts are flagged
 * for a person and do not hold the unit back (nothing the unit can send would settle them).
 */
export function waitingSales(report: RecoveryReport): string | null {
  const waiting = report.pending.filter((p) => p.waiting);
  if (waiting.length === 0) return null;
  return `${waiting.length} unfinished sale(s) wait for the payment service (${waiting[0]?.why ?? ""})`;
}
