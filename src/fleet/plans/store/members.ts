/**
 * The plans feature's queries on members and plans for its flows: a plan created or edited, a card's owner, a member
 * inserted, read, its agreement, status and grace set, the fees it still owes, and the members the cycle runs.
 */
import type { FleetContext } from "../../context.js";
import type { MemberStatus, MembersTable } from "../schema.js";

export async function insertPlan(
  ctx: FleetContext,
  id: string,
  p: {
    name: string;
    price: number;
    currency: "DKK" | "EUR";
    dayItems: number | null;
    dayAmount: number | null;
    monthItems: number | null;
    monthAmount: number | null;
    units: string[];
  },
): Promise<void> {
  await ctx.db
    .insertInto("plans")
    .values({
      id,
      name: p.name,
      price: p.price,
      currency: p.currency,
      day_items: p.dayItems,
      day_amount: p.dayAmount,
      month_items: p.monthItems,
      month_amount: p.monthAmount,
      units: JSON.stringify(p.units),
      active: 1,
      created_at: ctx.clock.now(),
    })
    .execute();
}

/** A plan's terms changed (its currency stays); false when there is no plan `id`. */
export async function updatePlan(
  ctx: FleetContext,
  id: string,
  p: {
    name: string;
    price: number;
    dayItems: number | null;
    dayAmount: number | null;
    monthItems: number | null;
    monthAmount: number | null;
    units: string[];
  },
): Promise<boolean> {
  const r = await ctx.db
    .updateTable("plans")
    .set({
      name: p.name,
      price: p.price,
      day_items: p.dayItems,
      day_amount: p.dayAmount,
      month_items: p.monthItems,
      month_amount: p.monthAmount,
      units: JSON.stringify(p.units),
    })
    .where("id", "=", id)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The pending, active or suspended member holding the badge, or undefined. */
export function memberWithBadge(ctx: FleetContext, badge: string) {
  return ctx.db
    .selectFrom("members")
    .select("id")
    .where("badge_hash", "=", badge)
    .where("status", "in", ["pending", "active", "suspended"])
    .executeTakeFirst();
}

/**
 * A new member row: a sign-up starts `pending` (active once its agreement is), a company member starts
 * `active` (activated now); no agreement, landing page or grace yet.
 */
export async function insertMember(
  ctx: FleetContext,
  m: {
    id: string;
    planId: string;
    status: "pending" | "active";
    name: string;
    phone: string | null;
    badge: string;
    companyId: string | null;
  },
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .insertInto("members")
    .values({
      id: m.id,
      plan_id: m.planId,
      status: m.status,
      name: m.name,
      phone: m.phone,
      badge_hash: m.badge,
      company_id: m.companyId,
      agreement_id: null,
      agreement_status: null,
      landing_url: null,
      grace_until: null,
      reason: "",
      created_at: now,
      activated_at: m.status === "active" ? now : null,
      updated_at: now,
    })
    .execute();
}

/** The member `id` (every column), or undefined. */
export function memberById(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("members").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function deleteMember(ctx: FleetContext, id: string): Promise<void> {
  await ctx.db.deleteFrom("members").where("id", "=", id).execute();
}

/** A sign-up's agreement, created and pending, with its landing page. */
export async function setAgreement(
  ctx: FleetContext,
  memberId: string,
  agreement: { id: string; landingUrl: string },
): Promise<void> {
  await ctx.db
    .updateTable("members")
    .set({
      agreement_id: agreement.id,
      agreement_status: "Pending",
      landing_url: agreement.landingUrl,
      updated_at: ctx.clock.now(),
    })
    .where("id", "=", memberId)
    .execute();
}

export async function updateMemberStatus(
  ctx: FleetContext,
  memberId: string,
  status: MemberStatus,
  patch: Partial<MembersTable> = {},
): Promise<void> {
  await ctx.db
    .updateTable("members")
    .set({ ...patch, status, updated_at: ctx.clock.now() })
    .where("id", "=", memberId)
    .execute();
}

/** Sets (a number) or clears (null) a member's grace, stamping `updated_at` with `now`. */
export async function setGrace(
  ctx: FleetContext,
  memberId: string,
  graceUntil: number | null,
  now: number,
): Promise<void> {
  await ctx.db
    .updateTable("members")
    .set({ grace_until: graceUntil, updated_at: now })
    .where("id", "=", memberId)
    .execute();
}

/** Clears a member's grace and nothing else (`updated_at` stays). */
export async function clearGraceOnly(ctx: FleetContext, memberId: string): Promise<void> {
  await ctx.db.updateTable("members").set({ grace_until: null }).where("id", "=", memberId).execute();
}

/** The period and state of every charge of a member. */
export function chargeStatesOf(ctx: FleetContext, memberId: string) {
  return ctx.db
    .selectFrom("plan_charges")
    .select(["period", "state"])
    .where("member_id", "=", memberId)
    .execute();
}

/** The agreement of a member's (for a capture), or undefined. */
export function memberAgreement(ctx: FleetContext, memberId: string) {
  return ctx.db.selectFrom("members").select("agreement_id").where("id", "=", memberId).executeTakeFirst();
}

/** The members the plan cycle runs: active or suspended with an accepted agreement, with their plans. */
export function cycleMembers(ctx: FleetContext) {
  return ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select([
      "members.id as id",
      "members.status as status",
      "members.agreement_id as agreement_id",
      "members.agreement_status as agreement_status",
      "members.grace_until as grace_until",
      "members.activated_at as activated_at",
      "members.reason as reason",
      "plans.name as plan_name",
      "plans.price as price",
      "plans.day_items as day_items",
      "plans.day_amount as day_amount",
      "plans.month_items as month_items",
      "plans.month_amount as month_amount",
    ])
    .where("members.status", "in", ["active", "suspended"])
    .where("members.agreement_status", "=", "Accepted")
    .execute();
}
