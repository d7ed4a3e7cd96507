/** The plans feature's queries on monthly charges (`plan_charges`): found, inserted, moved on, dropped. */
import type { FleetContext } from "../../context.js";
import type { PlanChargesTable } from "../schema.js";

/** The charge the service's payment `paymentId` is, or undefined. */
export function chargeByPaymentId(ctx: FleetContext, paymentId: string) {
  return ctx.db.selectFrom("plan_charges").selectAll().where("payment_id", "=", paymentId).executeTakeFirst();
}

export function chargeById(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("plan_charges").selectAll().where("id", "=", id).executeTakeFirst();
}

/** A payment callback's state for a charge, with the payment's id and status text. */
export async function setChargeState(
  ctx: FleetContext,
  id: string,
  c: { state: PlanChargesTable["state"]; paymentId: string; statusText: string },
  now: number,
): Promise<void> {
  await ctx.db
    .updateTable("plan_charges")
    .set({ state: c.state, payment_id: c.paymentId, status_text: c.statusText, updated_at: now })
    .where("id", "=", id)
    .execute();
}

/** Every charge of a member (every column). */
export function chargesOf(ctx: FleetContext, memberId: string) {
  return ctx.db.selectFrom("plan_charges").selectAll().where("member_id", "=", memberId).execute();
}

/** A charge `requested`, before the service is asked (kept as it is when its id exists). */
export async function insertRequestedCharge(
  ctx: FleetContext,
  c: { id: string; memberId: string; period: string; dueDate: string; amount: number; attempt: number },
  now: number,
): Promise<void> {
  await ctx.db
    .insertInto("plan_charges")
    .values({
      id: c.id,
      member_id: c.memberId,
      period: c.period,
      due_date: c.dueDate,
      amount: c.amount,
      attempt: c.attempt,
      state: "requested",
      payment_id: null,
      status_text: "",
      requested_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/** The service took the charge: pending with its payment id (only from `requested`). */
export async function markChargePending(
  ctx: FleetContext,
  id: string,
  paymentId: string,
  now: number,
): Promise<void> {
  await ctx.db
    .updateTable("plan_charges")
    .set({ state: "pending", payment_id: paymentId, updated_at: now })
    .where("id", "=", id)
    .where("state", "=", "requested")
    .execute();
}

/** The service refused the charge, with its reason. */
export async function markChargeDeclined(
  ctx: FleetContext,
  id: string,
  statusText: string,
  now: number,
): Promise<void> {
  await ctx.db
    .updateTable("plan_charges")
    .set({ state: "declined", status_text: statusText, updated_at: now })
    .where("id", "=", id)
    .execute();
}

/** Drops a charge still `requested` (its request failed; the next cycle asks again). */
export async function dropRequestedCharge(ctx: FleetContext, id: string): Promise<void> {
  await ctx.db.deleteFrom("plan_charges").where("id", "=", id).where("state", "=", "requested").execute();
}
