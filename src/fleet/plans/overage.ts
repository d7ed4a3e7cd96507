/**
 * Overage: a member's plan vends of a period against the plan's allowances (`usageOf`); what passed them is
 * billed as a one-off payment on the agreement once the period is over, and captured when reserved; the
 * usage report of every member.
 */
import type * as z from "zod";
import type { Minor } from "../../core/money.js";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { type PaymentCallback, type PlanLimits, type PlansSettings, periodOf } from "./common.js";
import type { UsageRow } from "./rows.js";
import { memberAgreement } from "./store/members.js";
import {
  deleteOverage,
  insertOverage,
  markOverageCaptured,
  overageById,
  overageByOneOff,
  overageIdByOneOff,
  planVendsOf,
  setOverageOneOff,
  setOverageState,
} from "./store/overages.js";
import { usageMembers } from "./store/plans.js";

export interface Usage {
  items: number;
  amount: Minor;
  overItems: number;
  overAmount: Minor;
}

/**
 * The vends a plan session counts against its member's allowance, as the unit counts them (journal
 * recordVend): a `captured` plan session was delivered or its outcome is unknown (MDB §7.4.7 counts it as
 * delivered; then `vends_ok` is 0, e.g. after a power cut right after the dispense): at least one.
 */
export function countedPlanVends(s: { result: string; vends_ok: number }): number {
  return s.result === "captured" ? Math.max(s.vends_ok, 1) : 0;
}

/**
 * A member's plan vends of a period (`sales` rows with member_id, driver `plan`, vends counted) against
 * the plan's allowances, in order of closing: a vend that would pass a day or month allowance is overage
 * (billed at its price) and does not count against the allowance.
 */
export async function usageOf(
  ctx: FleetContext,
  memberId: string,
  plan: PlanLimits,
  period: string,
): Promise<Usage> {
  const rows = await planVendsOf(ctx, memberId, period);
  const u: Usage = { items: 0, amount: 0, overItems: 0, overAmount: 0 };
  const day = new Map<string, { items: number; amount: number }>();
  const within = (limit: number | null, value: number) => limit === null || value <= limit;
  for (const r of rows) {
    for (let i = 0; i < countedPlanVends(r); i++) {
      const d = day.get(r.day) ?? { items: 0, amount: 0 };
      const ok =
        within(plan.day_items, d.items + 1) &&
        within(plan.day_amount, d.amount + r.price) &&
        within(plan.month_items, u.items + 1) &&
        within(plan.month_amount, u.amount + r.price);
      if (ok) {
        d.items += 1;
        d.amount += r.price;
        u.items += 1;
        u.amount += r.price;
        day.set(r.day, d);
      } else {
        u.overItems += 1;
        u.overAmount += r.price;
      }
    }
  }
  return u;
}

/** Usage of every active or suspended member in `period` (`YYYY-MM`, default: the current one). */
export async function usageReport(
  ctx: FleetContext,
  period = periodOf(ctx.clock.now(), ctx.timeZone),
): Promise<UsageRow[]> {
  const rows = await usageMembers(ctx);
  const out: UsageRow[] = [];
  for (const r of rows) {
    const u = await usageOf(ctx, r.id, r, period);
    out.push({ memberId: r.id, name: r.name, plan: r.plan, ...u });
  }
  return out;
}

export async function billOverage(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  m: PlanLimits & { id: string; agreement_id: string; plan_name: string },
  period: string,
  now: number,
): Promise<boolean> {
  const u = await usageOf(ctx, m.id, m, period);
  const id = `ov-${m.id}-${period}`;
  const inserted = await insertOverage(
    ctx,
    { id, memberId: m.id, period, items: u.overItems, amount: u.overAmount },
    now,
  );
  if (!inserted || u.overAmount === 0) return false;
  try {
    const o = await client.createOneOff(m.agreement_id, {
      amount: u.overAmount,
      description: `${m.plan_name}: ${u.overItems} over the allowance in ${period}`.slice(0, 60),
      externalId: id,
      redirectUrl: s.userRedirectUrl,
      autoReserve: s.autoReserve,
      expirationMinutes: 7 * 24 * 60,
    });
    await setOverageOneOff(ctx, id, o.id, s.autoReserve ? null : o.landingUrl, now);
  } catch (err) {
    ctx.logger.warn(
      { overage: id, err: (err as Error).message },
      "overage request failed; the next cycle retries",
    );
    await deleteOverage(ctx, id);
    return false;
  }
  ctx.logger.info({ memberId: m.id, period, items: u.overItems, amount: u.overAmount }, "overage billed");
  return true;
}

export async function isOverage(ctx: FleetContext, paymentId: string): Promise<boolean> {
  const r = await overageIdByOneOff(ctx, paymentId);
  return r !== undefined;
}

const ONEOFF_STATES: Record<string, "reserved" | "rejected" | "expired" | "requested"> = {
  Reserved: "reserved",
  Rejected: "rejected",
  Expired: "expired",
  Requested: "requested",
};

export async function applyOneOffEvent(
  ctx: FleetContext,
  client: SubscriptionsClient,
  e: z.infer<typeof PaymentCallback>,
): Promise<boolean> {
  const next = ONEOFF_STATES[e.status];
  if (next === undefined) return false;
  const o = await overageByOneOff(ctx, e.payment_id);
  if (o === undefined || o.state === "captured" || o.state === next) return false;
  await setOverageState(ctx, o.id, next, e.status_text ?? "");
  if (next === "reserved") await captureOverage(ctx, client, o.id);
  return true;
}

export async function captureOverage(
  ctx: FleetContext,
  client: SubscriptionsClient,
  overageId: string,
): Promise<void> {
  const o = await overageById(ctx, overageId);
  if (o === undefined || o.state !== "reserved" || o.oneoff_id === null) return;
  const m = await memberAgreement(ctx, o.member_id);
  if (!m?.agreement_id) return;
  try {
    await client.captureOneOff(m.agreement_id, o.oneoff_id);
  } catch (err) {
    ctx.logger.warn(
      { overage: o.id, err: (err as Error).message },
      "overage capture failed; the next cycle retries",
    );
    return;
  }
  await markOverageCaptured(ctx, o.id);
  ctx.logger.info({ overage: o.id, amount: o.amount }, "overage captured");
}
