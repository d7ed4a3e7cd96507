/**
 * The plans feature's queries for its pages and routes: plans, members, usage, a member's charges, overages
 * and refunds, a plan by id, a callback forgotten. views.ts renders what they return.
 */
import type { FleetContext } from "../context.js";
import type { MemberDetail, MemberRow, UsageRow } from "./rows.js";
import type { PlansTable } from "./schema.js";
import { periodOf, usageOf } from "./service.js";

/** The plan `id` (active or not), or undefined. */
export function planById(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("plans").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Forgets a callback seen (its digest), so that the service's retry of one not applied is handled as new. */
export async function forgetCallback(ctx: FleetContext, digest: string): Promise<void> {
  await ctx.db.deleteFrom("plan_callbacks").where("digest", "=", digest).execute();
}

export async function listPlans(ctx: FleetContext): Promise<PlansTable[]> {
  return ctx.db.selectFrom("plans").selectAll().orderBy("name").execute();
}

export async function listMembers(ctx: FleetContext): Promise<MemberRow[]> {
  return ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select([
      "members.id as id",
      "members.name as name",
      "members.status as status",
      "members.agreement_status as agreement_status",
      "members.grace_until as grace_until",
      "members.reason as reason",
      "members.company_id as company_id",
      "members.activated_at as activated_at",
      "plans.name as plan_name",
    ])
    .orderBy("members.name")
    .execute();
}

/** Usage of every active or suspended member in `period` (`YYYY-MM`, default: the current one). */
export async function usageReport(
  ctx: FleetContext,
  period = periodOf(ctx.clock.now(), ctx.timeZone),
): Promise<UsageRow[]> {
  const rows = await ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select([
      "members.id as id",
      "members.name as name",
      "plans.name as plan",
      "plans.day_items as day_items",
      "plans.day_amount as day_amount",
      "plans.month_items as month_items",
      "plans.month_amount as month_amount",
    ])
    .where("members.status", "in", ["active", "suspended"])
    .orderBy("members.name")
    .execute();
  const out: UsageRow[] = [];
  for (const r of rows) {
    const u = await usageOf(ctx, r.id, r, period);
    out.push({ memberId: r.id, name: r.name, plan: r.plan, ...u });
  }
  return out;
}

export async function loadMemberDetail(
  ctx: FleetContext,
  memberId: string,
): Promise<MemberDetail | undefined> {
  const member = (await listMembers(ctx)).find((m) => m.id === memberId);
  if (member === undefined) return undefined;
  const charges = await ctx.db
    .selectFrom("plan_charges")
    .select(["id", "period", "due_date", "amount", "state", "payment_id"])
    .where("member_id", "=", memberId)
    .orderBy("requested_at", "desc")
    .execute();
  const overages = await ctx.db
    .selectFrom("plan_overages")
    .select(["id", "period", "items", "amount", "state", "oneoff_id"])
    .where("member_id", "=", memberId)
    .orderBy("period", "desc")
    .execute();
  const refunds = await ctx.db
    .selectFrom("plan_refunds")
    .select(["id", "payment_id", "amount", "state", "status_text"])
    .where("member_id", "=", memberId)
    .orderBy("created_at", "desc")
    .execute();
  return { member, charges, overages, refunds };
}
