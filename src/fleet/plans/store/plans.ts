/**
 * The plans feature's queries for its pages and routes: plans, members, the members a usage report counts,
 * a member's charges, overages and refunds, a plan by id. views.ts renders what they return.
 */
import type { FleetContext } from "../../context.js";
import type { MemberDetail, MemberRow } from "../rows.js";
import type { PlansTable } from "../schema.js";

/** The plan `id` (active or not), or undefined. */
export function planById(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("plans").selectAll().where("id", "=", id).executeTakeFirst();
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

/** The active and suspended members with their plans' allowances, by name (what a usage report counts). */
export function usageMembers(ctx: FleetContext) {
  return ctx.db
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
