/** The plans feature's queries on entitlement lists (`plan_entitlements`) and the members they entitle. */
import type { FleetContext } from "../../context.js";
import type { PlanEntitlementsTable } from "../schema.js";

/** The active members of active plans with their plans' allowances and units, by member id. */
export function entitledMembers(ctx: FleetContext) {
  return ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select([
      "members.id as id",
      "members.badge_hash as badge",
      "members.activated_at as activated_at",
      "members.created_at as created_at",
      "plans.id as plan_id",
      "plans.day_items as day_items",
      "plans.day_amount as day_amount",
      "plans.month_items as month_items",
      "plans.month_amount as month_amount",
      "plans.units as units",
    ])
    .where("members.status", "=", "active")
    .where("plans.active", "=", 1)
    .orderBy("members.id")
    .execute();
}

/** The ETag of the newest list, or undefined before the first. */
export function newestEtagRow(ctx: FleetContext) {
  return ctx.db
    .selectFrom("plan_entitlements")
    .select("etag")
    .orderBy("serial", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** The newest list (every column), or undefined before the first. */
export function latestEntitlements(ctx: FleetContext) {
  return ctx.db
    .selectFrom("plan_entitlements")
    .selectAll()
    .orderBy("serial", "desc")
    .limit(1)
    .executeTakeFirst();
}

export async function insertEntitlements(ctx: FleetContext, row: PlanEntitlementsTable): Promise<void> {
  await ctx.db.insertInto("plan_entitlements").values(row).execute();
}

/** Drops the lists more than 10 older than `serial`. */
export async function pruneEntitlements(ctx: FleetContext, serial: number): Promise<void> {
  await ctx.db
    .deleteFrom("plan_entitlements")
    .where("serial", "<", serial - 10)
    .execute();
}

/** The newest signed list as units fetch it (document, signature, ETag), or undefined before the first. */
export function newestSignedList(ctx: FleetContext) {
  return ctx.db
    .selectFrom("plan_entitlements")
    .select(["document", "signature", "etag"])
    .orderBy("serial", "desc")
    .limit(1)
    .executeTakeFirst();
}
