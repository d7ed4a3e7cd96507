/** Fleet alerts (issue 37): rules, life, delivery, page, schedule. docs/alerts.md describes them. */
import type { FleetFeature } from "../feature.js";
import { mountAlertPages } from "./routes.js";
import type { AlertSettings } from "./settings.js";

export { alertEvaluator, channelsOf, type RunResult } from "./evaluate.js";
export { type AlertJob, startAlertJob } from "./job.js";
export { mountAlertPages } from "./routes.js";
export { alertsDb } from "./schema.js";
export { type AlertSettings, AlertsSection, alertSettings } from "./settings.js";
export { alertCounts, deliveryProblems, listAlerts } from "./store.js";

/**
 * The alerts page (issue 37) as the composition mounts it; the schedule starts the evaluator. Without
 * `settings` (no `alerts` section, or a dashboard without the section's services) the page says alerting
 * is off and how to turn it on (issue 42).
 */
export function alertsFeature(settings?: AlertSettings): FleetFeature {
  return {
    name: "alerts",
    pages: (web, ctx, t, p) => mountAlertPages(web, ctx, t, p, settings !== undefined),
    nav: [["/alerts", "Alerts"]],
  };
}
