/** What the plans feature runs with (the service's client and the settings) and its publisher of entitlements. */
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetContext } from "../context.js";
import { publishEntitlements } from "./entitlements.js";
import type { PlansSettings } from "./service.js";

export interface PlansOptions {
  client: SubscriptionsClient;
  settings: PlansSettings;
}

/**
 * The function that publishes a new entitlement list when due (`runPlanCycle`'s last argument); does
 * nothing without an entitlement key.
 */
export function plansPublisher(ctx: FleetContext, s: PlansSettings): (now: number) => Promise<boolean> {
  return async (now) =>
    s.entitlementKey === null
      ? false
      : publishEntitlements(ctx, now, {
          key: s.entitlementKey,
          badgeSalt: s.badgeSalt,
          validityMs: s.entitlementValidityMs,
        });
}
