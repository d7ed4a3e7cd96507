/**
 * The plans feature's public face (issue 18): what the composition mounts (`registerPlans`, publicRoutes.ts:
 * the public sign-up pages and the service's callbacks; routes.ts: the dashboard's pages; the units'
 * `registerEntitlementRoute`), what the schedule runs (`runPlanCycle`, `plansPublisher`), and what other
 * features use (service.ts, the usage counts). Nothing for units but the entitlement list.
 */
import type { SubscriptionsClient } from "../../payment/subscriptions/client.js";
import type { FleetFeature } from "../feature.js";
import { registerEntitlementRoute } from "./entitlements.js";
import type { PlansOptions } from "./options.js";
import { registerPlans } from "./publicRoutes.js";
import { mountPlanPages } from "./routes.js";
import type { PlansSettings } from "./service.js";

export { registerPlanAdmin } from "./admin.js";
export {
  buildEntitlementList,
  loadEntitlementKey,
  newestEntitlementEtag,
  publishEntitlements,
  registerEntitlementRoute,
} from "./entitlements.js";
export { type PlansOptions, plansPublisher } from "./options.js";
export { countedPlanVends, usageReport } from "./overage.js";
export { csrfToken, csrfValid, registerPlans } from "./publicRoutes.js";
export type { MemberDetail, MemberRow, UsageRow } from "./rows.js";
export type { PlansTable } from "./schema.js";
export * from "./service.js";
export { listMembers, listPlans, loadMemberDetail } from "./store/plans.js";
export * from "./views.js";

/** Tells the service where and how to call the fleet back (run once at start-up; both calls are PUT-like). */
export async function configureProvider(client: SubscriptionsClient, s: PlansSettings): Promise<void> {
  await client.setPaymentCallbackUrl(`${s.publicUrl}/plans/callbacks/payments`);
  await client.setCallbackApiKey(s.callbackApiKey);
}

/**
 * The plans feature: with plans configured, the public sign-up pages and the service's callbacks, the
 * units' entitlement list behind the unit API's authentication, and the nav; the pages are mounted either
 * way (they are empty without plans).
 */
export function plansFeature(plans: PlansOptions | undefined): FleetFeature {
  return {
    name: "plans",
    ...(plans === undefined
      ? {}
      : {
          register: async (app, ctx, tools) => {
            await registerPlans(app, ctx, plans);
            registerEntitlementRoute(app, ctx, tools.unitAuth);
          },
          nav: [
            ["/plans", "Plans"],
            ["/plans/members", "Members"],
            ["/plans/usage", "Usage"],
          ],
        }),
    pages: (web, ctx, t, p) => mountPlanPages(web, ctx, { plans }, t, p),
  };
}
