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
