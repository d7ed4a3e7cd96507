/** Refunds: a refund of an executed charge or captured overage is requested, and its callback recorded. */
import * as z from "zod";
import type { Minor } from "../../core/money.js";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { MS_DAY, newId, PlansError, type PlansSettings } from "./common.js";

/** The service refunds payments up to 30 days after execution (seed 000, Limits). */
export const REFUND_WINDOW_MS = 30 * MS_DAY;

/**
 * Asks the service to refund an executed charge or a captured overage of a member, in full (`amount` null)
 * or in part (minor units). Refused here when outside the window or above what is left to refund.
 */
export async function requestRefund(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  input: { memberId: string; paymentId: string; amount: Minor | null; by: string },
): Promise<string> {
  const m = await ctx.db
    .selectFrom("members")
    .selectAll()
    .where("id", "=", input.memberId)
    .executeTakeFirst();
  if (!m?.agreement_id) throw new PlansError(404, "no such member");
  const charge = await ctx.db
    .selectFrom("plan_charges")
    .select(["amount", "updated_at", "state"])
    .where("member_id", "=", m.id)
    .where("payment_id", "=", input.paymentId)
    .executeTakeFirst();
  const over = await ctx.db
    .selectFrom("plan_overages")
    .select(["amount", "updated_at", "state"])
    .where("member_id", "=", m.id)
    .where("oneoff_id", "=", input.paymentId)
    .executeTakeFirst();
  const paid = charge?.state === "executed" ? charge : over?.state === "captured" ? over : undefined;
  if (paid === undefined) throw new PlansError(404, "no executed payment of this member with that id");
  const now = ctx.clock.now();
  if (now - paid.updated_at > REFUND_WINDOW_MS)
    throw new PlansError(409, "the payment is older than 30 days");
  const done = await ctx.db
    .selectFrom("plan_refunds")
    .select(["amount", "state"])
    .where("payment_id", "=", input.paymentId)
    .where("state", "!=", "declined")
    .execute();
  const refunded = done.reduce((t, r) => t + (r.amount ?? paid.amount), 0);
  const want = input.amount ?? paid.amount - refunded;
  if (want <= 0 || refunded + want > paid.amount)
    throw new PlansError(409, "more than what is left to refund");
  const id = newId("r");
  await ctx.db
    .insertInto("plan_refunds")
    .values({
      id,
      member_id: m.id,
      payment_id: input.paymentId,
      amount: want,
      refund_id: null,
      state: "requested",
      status_text: "",
      requested_by: input.by,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const r = await client.refund(m.agreement_id, input.paymentId, {
    amount: input.amount === null && refunded === 0 ? null : want,
    callbackUrl: `${s.publicUrl}/plans/callbacks/refunds`,
    externalId: id,
  });
  await ctx.db.updateTable("plan_refunds").set({ refund_id: r.id }).where("id", "=", id).execute();
  ctx.logger.info({ memberId: m.id, refund: id, amount: want, by: input.by }, "plan refund requested");
  return id;
}

const RefundCallback = z.object({
  refund_id: z.string(),
  payment_id: z.string().optional(),
  status: z.string(),
  status_text: z.string().nullable().optional(),
  external_id: z.string().nullable().optional(),
});

export async function applyRefundCallback(ctx: FleetContext, body: unknown): Promise<boolean> {
  const e = RefundCallback.parse(body);
  const state = e.status === "Issued" ? "issued" : e.status === "Declined" ? "declined" : null;
  if (state === null) return false;
  const r = await ctx.db
    .selectFrom("plan_refunds")
    .selectAll()
    .where("refund_id", "=", e.refund_id)
    .executeTakeFirst();
  if (r === undefined || r.state !== "requested") return false;
  await ctx.db
    .updateTable("plan_refunds")
    .set({ state, status_text: e.status_text ?? "", updated_at: ctx.clock.now() })
    .where("id", "=", r.id)
    .execute();
  return true;
}
