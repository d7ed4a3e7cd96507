/**
 * The fleet process's Prometheus registry (issue 45), with prom-client, the kept client library: the series
 * are gauges read from the database at each scrape (the same figures whichever fleet process is asked)
 * and the unit API's ingest latency, a histogram of this process's `POST /events` requests. Fleet-level
 * series only: no label names a unit, a sale or a person.
 */
import { Gauge, Histogram, Registry } from "prom-client";
import { alertCounts, alertsDb } from "../alerts/index.js";
import type { FleetContext } from "../context.js";
import type { FleetMetrics } from "../feature.js";
import { listUnits } from "../units/index.js";
import { lastMinuteSales, rolloutStates } from "./store.js";

/** Every state a unit is counted in (the overview's: online, offline, stopped, pending, revoked). */
export const UNIT_STATES = ["online", "offline", "stopped", "pending", "revoked"] as const;

/** Every rollout state (rollouts/schema), each always present so a dashboard's sum is never missing one. */
export const ROLLOUT_STATES = [
  "waiting",
  "offered",
  "pending",
  "verified",
  "swapped",
  "healthy",
  "applied",
  "refused",
  "rolledBack",
] as const;

/** Ingest latency buckets, seconds: a batch is stored in milliseconds, a slow database in seconds. */
export const INGEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The registry and the instruments the unit API observes, made once per fleet app (server.ts). */
export function createFleetMetrics(): FleetMetrics {
  const registry = new Registry();
  const ingestSeconds = new Histogram({
    name: "vendd_fleet_ingest_duration_seconds",
    help: "Time to store a unit's batch of events (POST /events), seconds, in this fleet process",
    buckets: INGEST_BUCKETS,
    registers: [registry],
  });
  return { registry, observeIngest: (seconds) => ingestSeconds.observe(seconds) };
}

/** Adds the database-read gauges to `metrics`' registry; each is read when scraped. */
export function addFleetGauges(metrics: FleetMetrics, ctx: FleetContext): void {
  const registers = [metrics.registry];
  new Gauge({
    name: "vendd_fleet_units",
    help: "Units by state: online (a heartbeat within 3 minutes), offline, stopped, pending approval, revoked",
    labelNames: ["state"],
    registers,
    async collect() {
      const counts = new Map<string, number>(UNIT_STATES.map((s) => [s, 0]));
      for (const u of await listUnits(ctx)) {
        const state =
          u.status !== "approved" ? u.status : u.online ? "online" : u.stopped ? "stopped" : "offline";
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      this.reset();
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  // One query feeds both series of the last minute: a scrape collects every series at once, so the
  // second finds the first's query still running and shares it.
  let sales: Promise<Awaited<ReturnType<typeof lastMinuteSales>>> | null = null;
  const lastMinute = () => {
    sales ??= lastMinuteSales(ctx, ctx.clock.now()).finally(() => {
      sales = null;
    });
    return sales;
  };
  new Gauge({
    name: "vendd_fleet_vends_per_minute",
    help: "Vends delivered in sessions that closed in the last 60 seconds, the whole fleet",
    registers,
    async collect() {
      this.set((await lastMinute()).vends);
    },
  });
  new Gauge({
    name: "vendd_fleet_sales_amount_per_minute_minor",
    help: "Captured less refunded in sessions that closed in the last 60 seconds, minor units (cents, øre) by currency",
    labelNames: ["currency"],
    registers,
    async collect() {
      const { amounts } = await lastMinute();
      this.reset();
      for (const [currency, net] of amounts) this.set({ currency }, net);
    },
  });
  new Gauge({
    name: "vendd_fleet_alerts_open",
    help: "Open alerts, by whether a manager acknowledged them",
    labelNames: ["acknowledged"],
    registers,
    async collect() {
      const c = await alertCounts(alertsDb(ctx));
      this.set({ acknowledged: "false" }, c.open);
      this.set({ acknowledged: "true" }, c.acknowledged);
    },
  });
  new Gauge({
    name: "vendd_fleet_alert_deliveries_failing",
    help: "Alert deliveries (mail, webhook) that failed or are being retried after a failure",
    registers,
    async collect() {
      this.set((await alertCounts(alertsDb(ctx))).failedDeliveries);
    },
  });
  new Gauge({
    name: "vendd_fleet_rollouts",
    help: "Units' progress with bundles (one per unit and bundle), by state",
    labelNames: ["state"],
    registers,
    async collect() {
      const counts = await rolloutStates(ctx);
      for (const state of ROLLOUT_STATES) this.set({ state }, counts.get(state) ?? 0);
    },
  });
}
