/**
 * Monthly charges, grace and suspension: the fee of this month and the next is requested (a failed fee again,
 * due the next day), the payment callback of a charge is applied (a failure starts the fleet-side grace, a
 * payment ends it), and a member whose grace has passed with a fee unpaid is suspended.
 */
import type * as z from "zod";
import { DAY_MS } from "../../core/days.js";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import {
  nextPeriod,
  type PaymentCallback,
  type PlansSettings,
  periodOf,
  setStatus,
  unpaidPeriods,
  utcDay,
} from "./common.js";
import {
  chargeById,
  chargeByPaymentId,
  chargesOf,
  dropRequestedCharge,
  insertRequestedCharge,
  markChargeDeclined,
  markChargePending,
  setChargeState,
} from "./store/charges.js";
import { clearGraceOnly, memberById, setGrace } from "./store/members.js";

const CHARGE_STATES: Record<string, "executed" | "failed" | "declined" | "rejected"> = {
  Executed: "executed",
  Failed: "failed",
  Declined: "declined",
  Rejected: "rejected",
};

export async function applyChargeEvent(
  ctx: FleetContext,
  s: PlansSettings,
  e: z.infer<typeof PaymentCallback>,
): Promise<boolean> {
  const next = CHARGE_STATES[e.status];
  if (next === undefined) return false;
  let c = await chargeByPaymentId(ctx, e.payment_id);
  if (c === undefined && e.external_id) c = await chargeById(ctx, e.external_id);
  if (c === undefined) return false;
  const m = await memberById(ctx, c.member_id);
  if (m === undefined || m.agreement_id !== e.agreement_id) return false;
  if (c.state === "executed" || c.state === next) return false;
  const now = ctx.clock.now();
  await setChargeState(
    ctx,
    c.id,
    { state: next, paymentId: e.payment_id, statusText: e.status_text ?? "" },
    now,
  );
  ctx.logger.info({ memberId: m.id, charge: c.id, state: next }, "plan charge");
  if (next === "executed") {
    const unpaid = await unpaidPeriods(ctx, m.id);
    if (unpaid.length === 0) {
      if (m.status === "suspended" && m.reason === "payment failed")
        await setStatus(ctx, m.id, "active", { grace_until: null, reason: "" });
      else if (m.grace_until !== null) await setGrace(ctx, m.id, null, now);
    }
  } else if (m.status === "active" && m.grace_until === null) {
    await setGrace(ctx, m.id, now + (s.graceMs ?? 3 * DAY_MS), now);
  }
  return true;
}

/**
 * Requests what is due of a member's monthly fee at `now` (called by `runPlanCycle` for every member with an
 * accepted agreement): this month's fee (first month right away) and next month's `chargeAheadDays` ahead of
 * its due date; a failed fee again, due the next day, up to `maxChargeAttempts`. Returns how many charges
 * were requested; a request that failed is dropped and the next cycle retries.
 */
export async function requestDueCharges(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  m: { id: string; agreement_id: string; plan_name: string; price: number },
  now: number,
): Promise<number> {
  let requested = 0;
  const current = periodOf(now, ctx.timeZone);
  const next = nextPeriod(current);
  const tomorrow = utcDay(now + DAY_MS);
  const ahead = s.chargeAheadDays ?? 7;
  const maxAttempts = s.maxChargeAttempts ?? 8;
  const charges = await chargesOf(ctx, m.id);
  const latest = (period: string) =>
    charges.filter((c) => c.period === period).sort((a, b) => b.attempt - a.attempt)[0];
  const ask = async (period: string, dueDate: string, attempt: number) => {
    const id = `${m.id}-${period}-${attempt}`;
    const due = dueDate < tomorrow ? tomorrow : dueDate;
    await insertRequestedCharge(
      ctx,
      { id, memberId: m.id, period, dueDate: due, amount: m.price, attempt },
      now,
    );
    try {
      const r = await client.createCharges(
        [
          {
            agreementId: m.agreement_id,
            amount: m.price,
            dueDate: due,
            externalId: id,
            description: `${m.plan_name} ${period}`.slice(0, 60),
            graceDays: s.serviceGraceDays ?? 3,
          },
        ],
        `charge:${id}`,
      );
      const p = r.pending[0];
      if (p !== undefined) await markChargePending(ctx, id, p.paymentId, now);
      else await markChargeDeclined(ctx, id, r.rejected[0]?.reason ?? "rejected", now);
      requested++;
    } catch (err) {
      ctx.logger.warn(
        { charge: id, err: (err as Error).message },
        "charge request failed; the next cycle retries",
      );
      await dropRequestedCharge(ctx, id);
    }
  };
  if (m.price > 0) {
    const cur = latest(current);
    if (cur === undefined) await ask(current, `${current}-01`, 1);
    else if (["failed", "declined", "rejected"].includes(cur.state) && cur.attempt < maxAttempts)
      await ask(current, tomorrow, cur.attempt + 1);
    const nxt = latest(next);
    const nextDue = `${next}-01`;
    if (nxt === undefined && Date.parse(`${nextDue}T00:00:00Z`) - now <= ahead * DAY_MS)
      await ask(next, nextDue, 1);
    else if (
      nxt !== undefined &&
      ["failed", "declined", "rejected"].includes(nxt.state) &&
      nxt.attempt < maxAttempts
    )
      await ask(next, tomorrow, nxt.attempt + 1);
  }
  return requested;
}

/** Grace: a member is suspended at its end while a fee is unpaid (else the grace is just cleared). */
export async function suspendIfGraceOver(
  ctx: FleetContext,
  m: { id: string; status: string; grace_until: number | null },
  now: number,
): Promise<boolean> {
  if (m.status === "active" && m.grace_until !== null && m.grace_until <= now) {
    const unpaid = await unpaidPeriods(ctx, m.id);
    if (unpaid.length > 0) {
      await setStatus(ctx, m.id, "suspended", { reason: "payment failed" });
      return true;
    } else await clearGraceOnly(ctx, m.id);
  }
  return false;
}
