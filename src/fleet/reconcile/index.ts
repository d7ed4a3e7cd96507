/** Settlement reconciliation (issues 17, 30), as the composition mounts it: the dashboard's pages. */
import type { FleetFeature } from "../feature.js";
import { mountReconcilePages } from "./routes.js";

export const reconcileFeature: FleetFeature = {
  name: "reconciliation",
  pages: (web, ctx, t, p) => mountReconcilePages(web, ctx, t, p),
  nav: [["/reconcile", "Reconciliation"]],
};
