/**
 * Metrics (issue 45): `GET /metrics` in the Prometheus text format, fleet-level series only (units by state,
 * vends and amounts per minute, ingest latency, open alerts, failing deliveries, rollout states), for a
 * bearer token or a manager's session. docs/fleet-managers.md, "Metrics".
 */
import type { FleetFeature } from "../feature.js";
import { addFleetGauges } from "./registry.js";
import { registerMetricsRoute } from "./routes.js";

export { createFleetMetrics, INGEST_BUCKETS, ROLLOUT_STATES, UNIT_STATES } from "./registry.js";
export { bearerMatches, METRICS_PATH } from "./routes.js";

/** The feature for a fleet whose secrets may hold `metricsToken` (null: managers' sessions only). */
export function metricsFeature(token: string | null): FleetFeature {
  return {
    name: "metrics",
    async register(app, ctx, tools) {
      addFleetGauges(tools.metrics, ctx);
      registerMetricsRoute(app, ctx, tools.metrics, token);
    },
  };
}
