import { createHash } from "node:crypto";

/**
 * Identifiers the driver derives itself. Both are deterministic, so a restart or a retry derives the same
 * value without storing it.
 */

/**
 * A name-based GUID (UUID version 5 layout over SHA-1) for the `CorrelationId` header: one per transaction,
 * shared by its create, polls, capture and cancel (pos-v10 §3). `name` is e.g. `payment:<orderId>`.
 */
export function correlationIdFor(name: string): string {
  const h = createHash("sha1").update("vendd-correlation:").update(name).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.toString("hex", 0, 16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** Idempotency keys are at most 36 valid characters (pos-v10 §3, §14). */
export const MAX_KEY_LENGTH = 36;

/**
 * The idempotency key of the second initiate in 1301 recovery (pos-v10 §12: it is a NEW request, so it
 * needs a new key). Derived from the journal's key: the first 33 characters of it plus `-r1`, which is
 * ≤ 36 characters, deterministic (a retry of the recovery reuses it) and distinct from the original key.
 * A journal that restarts must resolve such an order with `lookup(orderId)`, not by resending the
 * original key, which the service never stored (a request refused with 1301 creates nothing, pos-v10 §9).
 */
export function deriveRecoveryKey(key: string): string {
  return `${key.slice(0, MAX_KEY_LENGTH - 3)}-r1`;
}
