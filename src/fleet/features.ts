/**
 * The whole fleet server as `vendd fleet serve` runs it: the unit API (server.ts) and, from the list below,
 * every feature's routes — reconciliation pages, DEX audits, member plans (public sign-up, the service's
 * callbacks, manager forms, the units' entitlement list), companies (the managers' set-up forms), company
 * invoices (callbacks, pages, cancel), the bundle upload form and alerts — with all pages inside the
 * dashboard's layout, login, CSRF and role checks. The list is the order: routes outside the dashboard are
 * registered, pages mounted and nav entries shown in it. A new feature is one more entry. The scheduled
 * jobs (nightly reconciliation, plan cycle, monthly invoices, alerts) are started by `startFleetJobs`
 * (jobs/schedule.ts); the features' tables by database.ts's list of migrations.
 */
import type { FastifyInstance } from "fastify";
import { mountAlertPages } from "./alerts/routes.js";
import { mountBundleUpload } from "./bundles/routes.js";
import { mountCompanyPages } from "./companies/routes.js";
import type { FleetContext } from "./context.js";
import { mountDexPages } from "./dex/routes.js";
import { registerInvoices } from "./invoices/callbacks.js";
import { mountInvoicePages } from "./invoices/routes.js";
import { registerEntitlementRoute, registerPlans } from "./plans/index.js";
import { mountPlanPages } from "./plans/routes.js";
import { mountReconcilePages } from "./reconcile/routes.js";
import type { FleetPlugin, FleetPluginTools } from "./server.js";
import type { FleetServices } from "./services.js";
import { type DashboardTools, registerDashboard } from "./web/index.js";
import { type PageTools, pageTools } from "./web/pageTools.js";

export { MAX_UPLOAD_BYTES } from "./bundles/routes.js";
export { type FleetJobs, startFleetJobs } from "./jobs/schedule.js";
export type { FleetInvoiceAuth, FleetServices } from "./services.js";

/** One feature as the composition mounts it; every part is optional. */
interface FleetFeature {
  name: string;
  /** Routes outside the dashboard (public pages, the service's callbacks, unit-facing lists). */
  register?(app: FastifyInstance, ctx: FleetContext, tools: FleetPluginTools): Promise<void>;
  /** Pages inside the dashboard (login, CSRF and roles already in place). */
  pages?(web: FastifyInstance, ctx: FleetContext, t: DashboardTools, p: PageTools): Promise<void> | void;
  /** Its entries in the dashboard's nav. */
  nav?: [string, string][];
}

/** Every feature of the fleet server for the configured services, in order. */
function fleetFeatures(s: FleetServices): FleetFeature[] {
  const plans = s.plans;
  const inv = s.invoices;
  return [
    {
      name: "reconciliation",
      pages: (web, ctx, t, p) => mountReconcilePages(web, ctx, t, p),
      nav: [["/reconcile", "Reconciliation"]],
    },
    { name: "dex", pages: (web, ctx, t, p) => mountDexPages(web, ctx, t, p), nav: [["/dex", "DEX audits"]] },
    {
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
      pages: (web, ctx, t, p) => mountPlanPages(web, ctx, s, t, p),
    },
    {
      name: "companies",
      pages: (web, ctx, t, p) => mountCompanyPages(web, ctx, s, t, p),
      nav: [["/companies", "Companies"]],
    },
    {
      name: "invoices",
      ...(inv === undefined
        ? {}
        : { register: (app, ctx) => registerInvoices(app, ctx, { auth: inv.auth, client: inv.client }) }),
      pages: (web, ctx, t, p) => mountInvoicePages(web, ctx, s, t, p),
      nav: [["/invoices", "Invoices"]],
    },
    { name: "bundles", pages: (web, ctx, t, p) => mountBundleUpload(web, ctx, t, p) },
    {
      name: "alerts",
      pages: (web, ctx, t, p) => mountAlertPages(web, ctx, t, p),
      nav: [["/alerts", "Alerts"]],
    },
  ];
}

/** Nav entries for the sections configured, in the dashboard's order. */
export function fleetNav(s: FleetServices): [string, string][] {
  return fleetFeatures(s).flatMap((f) => f.nav ?? []);
}

/** The plugins of `vendd fleet serve` for the configured services. */
export function fleetPlugins(s: FleetServices, opts: { secureCookies: boolean }): FleetPlugin[] {
  const features = fleetFeatures(s);
  const plugins: FleetPlugin[] = [];
  for (const f of features) {
    const register = f.register;
    if (register !== undefined) plugins.push((app, ctx, tools) => register(app, ctx, tools));
  }
  plugins.push(async (app, ctx) =>
    registerDashboard(app, ctx, {
      secureCookies: opts.secureCookies,
      nav: features.flatMap((f) => f.nav ?? []),
      bundleUploadHref: "/bundles/upload",
      extend: async (web, t) => {
        const p = pageTools(t);
        for (const f of features) await f.pages?.(web, ctx, t, p);
      },
    }),
  );
  return plugins;
}
