/**
 * The unit's own metrics for node_exporter's textfile collector (issue 45): a few gauges about this unit,
 * in the Prometheus text format written by prom-client (the kept client library), replaced atomically so
 * the collector never reads half a file. Never a per-sale series, never money (the file is world-readable
 * for node_exporter; the fleet's /metrics has the sales), never a secret.
 */
import { Gauge, Registry } from "prom-client";
import { writeFileAtomic } from "../core/atomicFile.js";
import type { ReasonCode, UnitStatus } from "./status.js";

/** Every reason a unit can be out of service: each is a series, 0 or 1, so a dashboard never misses one. */
const REASONS = {
  starting: true,
  paymentUnreachable: true,
  paymentRefused: true,
  vmcUnavailable: true,
  journal: true,
  failure: true,
  serviceMode: true,
  doorOpen: true,
  dexRead: true,
  stopping: true,
} satisfies Record<ReasonCode, true>;

/** What one write says about the unit. */
export interface UnitMetricsSnapshot {
  version: string;
  status: UnitStatus;
  /** Sessions the journal has not settled (recovery's work). */
  unresolved: number;
  /** The fleet outbox: undelivered events and the oldest one's time (ms), or null with no fleet link. */
  outbox: { events: number; oldestAt: number | null } | null;
  /** When the unit started (ms). */
  startedAt: number;
  now: number;
}

/** The snapshot in the Prometheus text format. */
export async function unitMetricsText(s: UnitMetricsSnapshot): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  new Gauge({ name: "vendd_unit_info", help: "The running vendd", labelNames: ["version"], registers }).set(
    { version: s.version },
    1,
  );
  new Gauge({
    name: "vendd_unit_in_service",
    help: "1 when the unit sells, 0 when out of service",
    registers,
  }).set(s.status.inService ? 1 : 0);
  const reasons = new Gauge({
    name: "vendd_unit_out_of_service_reason",
    help: "1 for each reason the unit is out of service now (vendd status has the detail)",
    labelNames: ["reason"],
    registers,
  });
  const now = new Set(s.status.reasons.map((r) => r.code));
  for (const reason of Object.keys(REASONS) as ReasonCode[]) reasons.set({ reason }, now.has(reason) ? 1 : 0);
  new Gauge({
    name: "vendd_unit_unresolved_sessions",
    help: "Sessions the journal has not settled yet (the sweeper settles them)",
    registers,
  }).set(s.unresolved);
  if (s.outbox !== null) {
    new Gauge({
      name: "vendd_unit_fleet_backlog_events",
      help: "Events not yet delivered to the fleet",
      registers,
    }).set(s.outbox.events);
    new Gauge({
      name: "vendd_unit_fleet_backlog_oldest_age_seconds",
      help: "Age of the oldest undelivered fleet event, seconds (0 when none waits)",
      registers,
    }).set(s.outbox.oldestAt === null ? 0 : Math.max(0, (s.now - s.outbox.oldestAt) / 1000));
  }
  new Gauge({
    name: "vendd_unit_start_time_seconds",
    help: "When the daemon started, Unix time",
    registers,
  }).set(s.startedAt / 1000);
  new Gauge({
    name: "vendd_unit_metrics_written_time_seconds",
    help: "When this file was written, Unix time (alert when it grows old: the daemon is not running)",
    registers,
  }).set(s.now / 1000);
  return registry.metrics();
}

/**
 * Replaces `path` with `text`: a temporary file beside it (`.NAME.tmp`, which the collector ignores), renamed
 * over it; mode 0644 so node_exporter's user can read it. Not fsynced: a write every few seconds must not
 * wear the SD card, and after a power cut the file is whole, old or new.
 */
export function writeMetricsTextfile(path: string, text: string): void {
  writeFileAtomic(path, text, { mode: 0o644, durable: false });
}
