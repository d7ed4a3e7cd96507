/** Refunds: a refund of an executed charge or captured overage is requested, and its callback recorded. */
import * as z from "zod";
import { DAY_MS } from "../../core/days.js";
import type { Minor } from "../../core/money.js";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { newId, PlansError, type PlansSettings } from "./common.js";
import { memberById } from "./store/members.js";
import {
  chargeOfPayment,
  insertRefund,
  overageOfPayment,
  refundByRefundId,
  refundsOfPayment,
  setRefundId,
  setRefundState,
} from "./store/refunds.js";

/** The service refunds payments up to 30 days after execution (seed 000, Limits). */
export const REFUND_WINDOW_MS = 30 * DAY_MS;

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
  const m = await memberById(ctx, input.memberId);
  if (!m?.agreement_id) throw new PlansError(404, "no such member");
  const charge = await chargeOfPayment(ctx, m.id, input.paymentId);
  const over = await overageOfPayment(ctx, m.id, input.paymentId);
  const paid = charge?.state === "executed" ? charge : over?.state === "captured" ? over : undefined;
  if (paid === undefined) throw new PlansError(404, "no executed payment of this member with that id");
  const now = ctx.clock.now();
  if (now - paid.updated_at > REFUND_WINDOW_MS)
    throw new PlansError(409, "the payment is older than 30 days");
  const done = await refundsOfPayment(ctx, input.paymentId);
  const refunded = done.reduce((t, r) => t + (r.amount ?? paid.amount), 0);
  const want = input.amount ?? paid.amount - refunded;
  if (want <= 0 || refunded + want > paid.amount)
    throw new PlansError(409, "more than what is left to refund");
  const id = newId("r");
  await insertRefund(
    ctx,
    { id, memberId: m.id, paymentId: input.paymentId, amount: want, by: input.by },
    now,
  );
  const r = await client.refund(m.agreement_id, input.paymentId, {
    amount: input.amount === null && refunded === 0 ? null : want,
    callbackUrl: `${s.publicUrl}/plans/callbacks/refunds`,
    externalId: id,
  });
  await setRefundId(ctx, id, r.id);
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
  const r = await refundByRefundId(ctx, e.refund_id);
  if (r === undefined || r.state !== "requested") return false;
  await setRefundState(ctx, r.id, state, e.status_text ?? "");
  return true;
}
