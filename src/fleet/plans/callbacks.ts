/**
 * The service's callbacks: the Authorization check, replay refusal, and the payment callbacks (one object or
 * a batch) dispatched to the monthly charges or the overage one-offs. Agreement callbacks are in
 * agreements.ts, refund callbacks in refunds.ts.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import * as z from "zod";
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { applyChargeEvent } from "./charges.js";
import { PaymentCallback, type PlansSettings } from "./common.js";
import { applyOneOffEvent, isOverage } from "./overage.js";
import { recordCallback } from "./store/callbacks.js";

/** Constant-time check of a callback's Authorization header against the key the fleet set. */
export function callbackAuthorised(header: unknown, s: PlansSettings): boolean {
  if (typeof header !== "string") return false;
  const a = createHash("sha256").update(header).digest();
  const b = createHash("sha256").update(s.callbackApiKey).digest();
  return timingSafeEqual(a, b);
}

/** Records a callback's digest; null when it was seen before (a replay: nothing more is done). */
export async function firstSighting(ctx: FleetContext, kind: string, body: string): Promise<string | null> {
  const digest = createHash("sha256").update(`${kind}\n${body}`).digest("hex");
  return (await recordCallback(ctx, digest, kind)) ? digest : null;
}

const PaymentCallbacks = z.union([z.array(PaymentCallback), PaymentCallback]);

/** Payment callbacks (one object or a batch): charges and overage one-offs. */
export async function applyPaymentCallbacks(
  ctx: FleetContext,
  client: SubscriptionsClient,
  s: PlansSettings,
  body: unknown,
): Promise<number> {
  const parsed = PaymentCallbacks.parse(body);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  let applied = 0;
  for (const e of list) {
    if (e.payment_type === "OneOff" || (await isOverage(ctx, e.payment_id))) {
      if (await applyOneOffEvent(ctx, client, e)) applied++;
    } else if (await applyChargeEvent(ctx, s, e)) applied++;
  }
  return applied;
}
