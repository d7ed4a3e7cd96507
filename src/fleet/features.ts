/**
 * The whole fleet server as `vendd fleet serve` runs it: the unit API (server.ts) and, from the list below,
 * every feature's routes — the units' overview, list and pages, sales, reconciliation pages, DEX audits, member plans (public sign-up, the service's
 * callbacks, manager forms, the units' entitlement list), companies (the managers' set-up forms), company
 * invoices (callbacks, pages, cancel), the bundles page and upload form, and alerts — with all pages inside the
 * dashboard's layout, login, CSRF and role checks. The list is the order: routes outside the dashboard are
 * registered, pages mounted and nav entries shown in it. A new feature is one more entry. The scheduled
 * jobs (nightly reconciliation, plan cycle, monthly invoices, alerts) are started by `startFleetJobs`
 * (jobs/schedule.ts); the features' tables by database.ts's list of migrations.
 */

import type { FastifyInstance } from "fastify";
import { alertsFeature } from "./alerts/index.js";
import { bundleListFeature, bundlesFeature } from "./bundles/index.js";
import { type CallbackChecks, callbackNotice } from "./callbackChecks.js";
import { companiesFeature } from "./companies/index.js";
import type { FleetContext } from "./context.js";
import { dexFeature } from "./dex/index.js";
import type { FleetFeature } from "./feature.js";
import { groupsFeature } from "./groups/index.js";
import { invoicesFeature } from "./invoices/index.js";
import { metricsFeature } from "./metrics/index.js";
import { plansFeature } from "./plans/index.js";
import { reconcileFeature } from "./reconcile/index.js";
import { rolloutsFeature } from "./rollouts/index.js";
import { salesFeature } from "./sales/index.js";
import type { FleetPlugin } from "./server.js";
import type { FleetServices } from "./services.js";
import { unitsFeature } from "./units/index.js";
import { valuesFeature } from "./values/index.js";
import { type DashboardOptions, type DashboardTools, registerDashboard } from "./web/index.js";
import { pageTools } from "./web/pageTools.js";

export { MAX_UPLOAD_BYTES } from "./bundles/routes.js";
export { type FleetJobs, startFleetJobs } from "./jobs/schedule.js";
export type { FleetInvoiceAuth, FleetServices } from "./services.js";

/** Every feature of the fleet server for the configured services, in order (each one's index.ts). */
function fleetFeatures(s: FleetServices): FleetFeature[] {
  return [
    unitsFeature,
    salesFeature,
    reconcileFeature,
    dexFeature,
    plansFeature(s.plans),
    companiesFeature(s.plans),
    invoicesFeature(s.invoices),
    bundlesFeature,
    groupsFeature,
    valuesFeature,
    rolloutsFeature,
    alertsFeature(s.alerts),
    metricsFeature(s.metricsToken ?? null),
  ];
}

/**
 * The dashboard's own pages, which every dashboard has (`vendd fleet demo`'s and the tests' too): the
 * units' overview, list and pages, sales, and the bundles page. Their nav entries are the shell's.
 */
export const DASHBOARD_PAGES: readonly FleetFeature[] = [
  unitsFeature,
  salesFeature,
  bundleListFeature,
  // The overview links to the alerts page (its counts): it is there, saying alerting is off (issue 42).
  alertsFeature(),
];

/** `extend` of the dashboard: mounts each feature's pages, in order. */
function mountPages(features: readonly FleetFeature[], ctx: FleetContext) {
  return async (web: FastifyInstance, t: DashboardTools): Promise<void> => {
    const p = pageTools(t);
    for (const f of features) await f.pages?.(web, ctx, t, p);
  };
}

/** The dashboard with its own pages alone (DASHBOARD_PAGES): no configured sections, no uploads. */
export function registerFleetDashboard(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: Omit<DashboardOptions, "extend"> = {},
): Promise<void> {
  return registerDashboard(app, ctx, {
    ...opts,
    nav: DASHBOARD_PAGES.flatMap((f) => f.nav ?? []),
    extend: mountPages(DASHBOARD_PAGES, ctx),
  });
}

/** Nav entries for the sections configured, in the dashboard's order. */
export function fleetNav(s: FleetServices): [string, string][] {
  return fleetFeatures(s).flatMap((f) => f.nav ?? []);
}

/** The plugins of `vendd fleet serve` for the configured services. */
/** What every dashboard page says while a payment service refuses the fleet's callback address. */
function noticesOf(checks: CallbackChecks): () => string[] {
  return () => checks.refused().map(callbackNotice);
}

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
      extend: mountPages(features, ctx),
      ...(s.callbacks === undefined ? {} : { notices: noticesOf(s.callbacks) }),
    }),
  );
  return plugins;
}
