/** The plans feature's queries on overage (`plan_overages`) and on the plan vends it is counted from. */
import type { FleetContext } from "../../context.js";
import type { PlanOveragesTable } from "../schema.js";

/** A member's captured plan vends of a period (`YYYY-MM`), in order of closing. */
export function planVendsOf(ctx: FleetContext, memberId: string, period: string) {
  return ctx.db
    .selectFrom("sales")
    .select(["day", "price", "vends_ok", "result", "closed_at"])
    .where("member_id", "=", memberId)
    .where("driver", "=", "plan")
    .where("day", ">=", `${period}-01`)
    .where("day", "<=", `${period}-31`)
    .where("result", "=", "captured")
    .orderBy("closed_at", "asc")
    .execute();
}

/** A period's overage row (`requested`, or `none` when nothing passed); true when inserted, false when known. */
export async function insertOverage(
  ctx: FleetContext,
  o: { id: string; memberId: string; period: string; items: number; amount: number },
  now: number,
): Promise<boolean> {
  const inserted = await ctx.db
    .insertInto("plan_overages")
    .values({
      id: o.id,
      member_id: o.memberId,
      period: o.period,
      items: o.items,
      amount: o.amount,
      state: o.amount > 0 ? "requested" : "none",
      oneoff_id: null,
      landing_url: null,
      status_text: "",
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** The one-off payment the service created for an overage, and its landing page (null when reserved). */
export async function setOverageOneOff(
  ctx: FleetContext,
  id: string,
  oneoffId: string,
  landingUrl: string | null,
  now: number,
): Promise<void> {
  await ctx.db
    .updateTable("plan_overages")
    .set({ oneoff_id: oneoffId, landing_url: landingUrl, updated_at: now })
    .where("id", "=", id)
    .execute();
}

export async function deleteOverage(ctx: FleetContext, id: string): Promise<void> {
  await ctx.db.deleteFrom("plan_overages").where("id", "=", id).execute();
}

/** The id of the overage whose one-off payment is `paymentId`, or undefined. */
export function overageIdByOneOff(ctx: FleetContext, paymentId: string) {
  return ctx.db
    .selectFrom("plan_overages")
    .select("id")
    .where("oneoff_id", "=", paymentId)
    .executeTakeFirst();
}

/** The overage (every column) whose one-off payment is `paymentId`, or undefined. */
export function overageByOneOff(ctx: FleetContext, paymentId: string) {
  return ctx.db.selectFrom("plan_overages").selectAll().where("oneoff_id", "=", paymentId).executeTakeFirst();
}

/** A one-off callback's state for an overage, with its status text. */
export async function setOverageState(
  ctx: FleetContext,
  id: string,
  state: PlanOveragesTable["state"],
  statusText: string,
): Promise<void> {
  await ctx.db
    .updateTable("plan_overages")
    .set({ state, status_text: statusText, updated_at: ctx.clock.now() })
    .where("id", "=", id)
    .execute();
}

export function overageById(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("plan_overages").selectAll().where("id", "=", id).executeTakeFirst();
}

/** A reserved overage captured (only from `reserved`). */
export async function markOverageCaptured(ctx: FleetContext, id: string): Promise<void> {
  await ctx.db
    .updateTable("plan_overages")
    .set({ state: "captured", updated_at: ctx.clock.now() })
    .where("id", "=", id)
    .where("state", "=", "reserved")
    .execute();
}

/** The id of a member's overage row of a period, or undefined (not yet billed). */
export function overageOf(ctx: FleetContext, memberId: string, period: string) {
  return ctx.db
    .selectFrom("plan_overages")
    .select("id")
    .where("member_id", "=", memberId)
    .where("period", "=", period)
    .executeTakeFirst();
}

/** The overages reserved but not yet captured (a capture that failed earlier). */
export function reservedOverages(ctx: FleetContext) {
  return ctx.db.selectFrom("plan_overages").select("id").where("state", "=", "reserved").execute();
}
