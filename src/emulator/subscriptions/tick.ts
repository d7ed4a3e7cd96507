/** The time rules of the subscriptions world, run on each clock tick (seed 000). */
import { expireAgreement } from "./agreement-flow.js";
import { finishOneOff } from "./oneoff-flow.js";
import { runDue, validate } from "./payment-flow.js";
import type { SubsState } from "./state.js";

/** Runs every rule that became due by `now`, in time order per record. */
export function tick(s: SubsState, now: number): void {
  for (const id of s.takeValidation()) {
    const p = s.payments.get(id);
    if (p?.status === "Received") validate(s, p);
  }
  for (const a of s.agreements.values()) {
    if (a.status === "Pending" && a.expiresAt <= now) expireAgreement(s, a);
  }
  for (const p of s.payments.values()) runDue(s, p, now);
  for (const o of s.oneOffs.values()) {
    if ((o.status === "Requested" || o.status === "Reserved") && o.expiresAt <= now)
      finishOneOff(s, o, "Expired", 50008, false);
  }
  s.deps.delivery.tick(now);
}

/**
 * The earliest emulator time at which `tick` has something to do (the clock stops there within an advance):
 * validation at once, a Pending agreement's expiry, a payment's next run (or its failure at the end of its
 * last retry day), a one-off's expiry, the callback service's next batch or retry; null when nothing waits.
 */
export function nextDue(s: SubsState): number | null {
  let min: number | null = s.validationQueued ? s.now() : null;
  const consider = (t: number | null): void => {
    if (t !== null && (min === null || t < min)) min = t;
  };
  for (const a of s.agreements.values()) if (a.status === "Pending") consider(a.expiresAt);
  for (const p of s.payments.values()) {
    // A Suspended payment's last nextRunAt is its failure time (23:59 of the last retry day).
    if (p.status === "Pending" || p.status === "Suspended") consider(p.nextRunAt);
  }
  for (const o of s.oneOffs.values())
    if (o.status === "Requested" || o.status === "Reserved") consider(o.expiresAt);
  consider(s.deps.delivery.nextDue());
  return min;
}
