import { fail } from "./errors.js";
import type { Caller } from "./headers.js";
import type { Owner } from "./model.js";

/** Tolerance of the early-poll count, ms (timer and clock granularity). */
const POLL_TOLERANCE_MS = 5;

/**
 * Ownership (seed Authentication; pos-v10 §11): only the integrator that created a resource, acting for the
 * same merchant, may see or change it. Other integrator → `integratorCode`, same integrator for another
 * merchant → `merchantCode` (both 403).
 */
export function checkOwner(owner: Owner, caller: Caller, integratorCode: string, merchantCode: string): void {
  if (owner.clientId !== caller.clientId) fail(403, integratorCode, "created by another integrator");
  if (owner.vat !== caller.vat) fail(403, merchantCode, "created for another merchant");
}

/** The owner record of a new resource. */
export function ownerOf(caller: Caller): Owner {
  return { clientId: caller.clientId, vat: caller.vat };
}

/** Scope of idempotency keys: integrator, merchant, method and path (pos-v10 §9 emulator choice). */
export function keyScope(caller: Caller, method: string, path: string): string {
  return `${caller.clientId}\n${caller.vat}\n${method} ${path}`;
}

/** A polled resource: remembers the last poller to count polls faster than `pollDelayInMs` (pos-v10 §10). */
export interface Polled {
  polledBy: string | null;
  polledAt: number;
}

/** Records a poll; true when the same client polled sooner than `delayMs` after its previous poll. */
export function recordPoll(target: Polled, clientId: string, now: number, delayMs: number): boolean {
  const early = target.polledBy === clientId && now - target.polledAt + POLL_TOLERANCE_MS < delayMs;
  target.polledBy = clientId;
  target.polledAt = now;
  return early;
}
