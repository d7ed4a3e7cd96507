/**
 * The scheduler step `runPlanCycle`: what is due at an instant, for every member with an accepted agreement
 * (monthly charges and grace in charges.ts, overage in overage.ts), then the entitlement list is published.
 */
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { requestDueCharges, suspendIfGraceOver } from "./charges.js";
import { type PlansSettings, periodOf, previousPeriod } from "./common.js";
import { billOverage, captureOverage } from "./overage.js";
import { cycleMembers } from "./store/members.js";
import { overageOf, reservedOverages } from "./store/overages.js";

export interface CycleReport {
  chargesRequested: number;
  suspended: number;
  overagesBilled: number;
  captured: number;
  published: boolean;
}

/**
 * What is due at `now`, idempotent (run it as often as you like; the lead wires it with croner, e.g. every
 * 10 minutes): request this month's fee (first month right away) and next month's `chargeAheadDays` ahead
 * of its due date; re-request a failed fee; suspend members whose grace has passed with a fee unpaid; bill
 * last month's overage as a one-off payment on the agreement; capture reserved overages; publish a new
 * entitlement list when the set of entitled members changed or the last list is half-way to expiry.
 */
export async function runPlanCycle(
  ctx: FleetContext,
  client: SubscriptionsClient,
  now: number,
  s: PlansSettings,
  publish?: (now: number) => Promise<boolean>,
): Promise<CycleReport> {
  const report: CycleReport = {
    chargesRequested: 0,
    suspended: 0,
    overagesBilled: 0,
    captured: 0,
    published: false,
  };
  const members = await cycleMembers(ctx);
  const current = periodOf(now, ctx.timeZone);
  for (const m of members) {
    if (m.agreement_id === null) continue;
    report.chargesRequested += await requestDueCharges(
      ctx,
      client,
      s,
      { ...m, agreement_id: m.agreement_id },
      now,
    );
    if (await suspendIfGraceOver(ctx, m, now)) report.suspended++;
    // Overage of the last period, once the period is over.
    const last = previousPeriod(current);
    if (m.activated_at !== null && periodOf(m.activated_at, ctx.timeZone) <= last) {
      const known = await overageOf(ctx, m.id, last);
      if (
        known === undefined &&
        (await billOverage(ctx, client, s, { ...m, agreement_id: m.agreement_id }, last, now))
      )
        report.overagesBilled++;
    }
  }
  // Reserved but not yet captured (a capture that failed earlier).
  const reserved = await reservedOverages(ctx);
  for (const r of reserved) {
    await captureOverage(ctx, client, r.id);
    report.captured++;
  }
  if (publish) report.published = await publish(now);
  return report;
}
