/**
 * The whole fleet server as `vendd fleet serve` runs it: the unit API, the dashboard, and — when their
 * config sections are present — reconciliation pages, member plans (public sign-up, the service's
 * callbacks, manager forms, the units' entitlement list), company invoices (callbacks, pages, cancel), the
 * managers' company set-up forms (src/fleet/invoices/forms.ts) and the bundle upload form, all pages inside
 * the dashboard's layout, login, CSRF and role checks. The scheduled jobs (nightly reconciliation, plan
 * cycle, monthly invoices) are started by `startFleetJobs`.
 */
import type { FastifyInstance } from "fastify";
import { mountAlertPages } from "./alerts/routes.js";
import { mountCompanyPages } from "./composeCompanies.js";
import { mountDexPages } from "./composeDex.js";
import { mountInvoicePages } from "./composeInvoices.js";
import { mountPlanPages } from "./composePlans.js";
import { mountReconcilePages } from "./composeReconcile.js";
import type { FleetServices } from "./composeServices.js";
import { pageTools } from "./composeTools.js";
import { mountBundleUpload } from "./composeUpload.js";
import type { FleetContext } from "./context.js";
import { registerInvoices } from "./invoices/callbacks.js";
import { registerEntitlementRoute, registerPlans } from "./plans/index.js";
import type { FleetPlugin } from "./server.js";
import { type DashboardTools, registerDashboard } from "./web/index.js";

export { type FleetJobs, startFleetJobs } from "./composeJobs.js";
export type { FleetInvoiceAuth, FleetServices } from "./composeServices.js";
export { MAX_UPLOAD_BYTES } from "./composeUpload.js";

/** Nav entries for the sections configured, in the dashboard's order. */
export function fleetNav(s: FleetServices): [string, string][] {
  const nav: [string, string][] = [
    ["/reconcile", "Reconciliation"],
    ["/dex", "DEX audits"],
  ];
  if (s.plans !== undefined)
    nav.push(["/plans", "Plans"], ["/plans/members", "Members"], ["/plans/usage", "Usage"]);
  nav.push(["/companies", "Companies"], ["/invoices", "Invoices"], ["/alerts", "Alerts"]);
  return nav;
}

async function mountPages(
  web: FastifyInstance,
  ctx: FleetContext,
  s: FleetServices,
  t: DashboardTools,
): Promise<void> {
  const p = pageTools(t);
  mountReconcilePages(web, ctx, t, p);
  mountDexPages(web, ctx, t, p);
  await mountPlanPages(web, ctx, s, t, p);
  mountCompanyPages(web, ctx, s, t, p);
  mountInvoicePages(web, ctx, s, t, p);
  await mountBundleUpload(web, ctx, t, p);
  mountAlertPages(web, ctx, t, p);
}

/** The plugins of `vendd fleet serve` for the configured services. */
export function fleetPlugins(s: FleetServices, opts: { secureCookies: boolean }): FleetPlugin[] {
  const plugins: FleetPlugin[] = [];
  if (s.plans !== undefined) {
    const plans = s.plans;
    plugins.push(async (app, ctx, tools) => {
      await registerPlans(app, ctx, plans);
      registerEntitlementRoute(app, ctx, tools.unitAuth);
    });
  }
  if (s.invoices !== undefined) {
    const inv = s.invoices;
    plugins.push(async (app, ctx) => registerInvoices(app, ctx, { auth: inv.auth, client: inv.client }));
  }
  plugins.push(async (app, ctx) =>
    registerDashboard(app, ctx, {
      secureCookies: opts.secureCookies,
      nav: fleetNav(s),
      bundleUploadHref: "/bundles/upload",
      extend: (web, tools) => mountPages(web, ctx, s, tools),
    }),
  );
  return plugins;
}
