/** Fleet alerts (issue 37): rules, life, delivery, page, schedule. docs/alerts.md describes them. */
import type { FleetFeature } from "../feature.js";
import { mountAlertPages } from "./routes.js";

export { alertEvaluator, channelsOf, type RunResult } from "./evaluate.js";
export { type AlertJob, startAlertJob } from "./job.js";
export { mountAlertPages } from "./routes.js";
export { alertsDb } from "./schema.js";
export { type AlertSettings, AlertsSection, alertSettings } from "./settings.js";
export { alertCounts, deliveryProblems, listAlerts } from "./store.js";

/** The alerts page (issue 37) as the composition mounts it; the schedule starts the evaluator. */
export const alertsFeature: FleetFeature = {
  name: "alerts",
  pages: (web, ctx, t, p) => mountAlertPages(web, ctx, t, p),
  nav: [["/alerts", "Alerts"]],
};
