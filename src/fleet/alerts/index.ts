/** Fleet alerts (issue 37): rules, life, delivery, page, schedule. docs/alerts.md describes them. */
export { alertEvaluator, channelsOf, type RunResult } from "./evaluate.js";
export { type AlertJob, startAlertJob } from "./job.js";
export { mountAlertPages } from "./routes.js";
export { alertsDb } from "./schema.js";
export { type AlertSettings, AlertsSection, alertSettings } from "./settings.js";
export { alertCounts, deliveryProblems, listAlerts } from "./store.js";
