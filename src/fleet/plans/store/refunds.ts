/** The plans feature's queries on refunds (`plan_refunds`) and on the payments they refund. */
import type { FleetContext } from "../../context.js";
import type { PlanRefundsTable } from "../schema.js";

/** A member's charge paid by `paymentId` (amount, when it last changed, state), or undefined. */
export function chargeOfPayment(ctx: FleetContext, memberId: string, paymentId: string) {
  return ctx.db
    .selectFrom("plan_charges")
    .select(["amount", "updated_at", "state"])
    .where("member_id", "=", memberId)
    .where("payment_id", "=", paymentId)
    .executeTakeFirst();
}

/** A member's overage paid by the one-off `paymentId` (amount, when it last changed, state), or undefined. */
export function overageOfPayment(ctx: FleetContext, memberId: string, paymentId: string) {
  return ctx.db
    .selectFrom("plan_overages")
    .select(["amount", "updated_at", "state"])
    .where("member_id", "=", memberId)
    .where("oneoff_id", "=", paymentId)
    .executeTakeFirst();
}

/** The refunds of a payment not declined (amount, state). */
export function refundsOfPayment(ctx: FleetContext, paymentId: string) {
  return ctx.db
    .selectFrom("plan_refunds")
    .select(["amount", "state"])
    .where("payment_id", "=", paymentId)
    .where("state", "!=", "declined")
    .execute();
}

/** A refund `requested`, before the service is asked. */
export async function insertRefund(
  ctx: FleetContext,
  r: { id: string; memberId: string; paymentId: string; amount: number; by: string },
  now: number,
): Promise<void> {
  await ctx.db
    .insertInto("plan_refunds")
    .values({
      id: r.id,
      member_id: r.memberId,
      payment_id: r.paymentId,
      amount: r.amount,
      refund_id: null,
      state: "requested",
      status_text: "",
      requested_by: r.by,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** The service's id of a refund requested. */
export async function setRefundId(ctx: FleetContext, id: string, refundId: string): Promise<void> {
  await ctx.db.updateTable("plan_refunds").set({ refund_id: refundId }).where("id", "=", id).execute();
}

/** The refund the service calls `refundId`, or undefined. */
export function refundByRefundId(ctx: FleetContext, refundId: string) {
  return ctx.db.selectFrom("plan_refunds").selectAll().where("refund_id", "=", refundId).executeTakeFirst();
}

/** A refund callback's state, with its status text. */
export async function setRefundState(
  ctx: FleetContext,
  id: string,
  state: PlanRefundsTable["state"],
  statusText: string,
): Promise<void> {
  await ctx.db
    .updateTable("plan_refunds")
    .set({ state, status_text: statusText, updated_at: ctx.clock.now() })
    .where("id", "=", id)
    .execute();
}
