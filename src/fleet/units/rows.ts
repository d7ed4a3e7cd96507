/** The shapes of the units the dashboard reads (the stores read them, views.ts renders them). */
import type { BundleSummary } from "../bundles/index.js";
import type { DailySeries, Totals } from "../sales/index.js";

export type UnitStatus = "pending" | "approved" | "revoked";

export interface UnitSummary {
  id: string;
  label: string;
  status: UnitStatus;
  fingerprint: string;
  enrolledAt: number;
  lastSeenAt: number | null;
  online: boolean;
  configVersion: string | null;
  releaseVersion: string | null;
  /** The vendd version the unit's last heartbeat named (the package it runs), or null before one. */
  venddVersion: string | null;
  backlogEvents: number;
  backlogOldestAt: number | null;
  unresolved: number;
  committedSeq: number;
  /** Offline after its last heartbeat said it was stopping (a clean stop): shown as stopped, not a problem. */
  stopped: boolean;
  /** Why the unit needs a look: unresolved sessions, a large or old backlog. */
  attention: string[];
}

export interface Vend {
  sessionId: string;
  orderId: string;
  paymentId: string | null;
  item: number;
  price: number;
  result: string;
  captured: number;
  refunded: number;
  currency: string;
  vendsOk: number;
  vendsFailed: number;
  closedAt: number;
}

export interface UnitEventRow {
  seq: number;
  at: number;
  kind: string;
  data: unknown;
}

export interface UnitDetail {
  unit: UnitSummary;
  heartbeat: unknown;
  chart: DailySeries;
  totals30: Totals[];
  recentVends: Vend[];
  faults: UnitEventRow[];
  versions: UnitEventRow[];
  bundles: BundleSummary[];
  /** The unit's latest DEX read and a manager's "G85 always wrong" mark (issue 42); null without either. */
  dex: {
    lastRead: { readId: string; at: number; outcome: string; g85: string | null } | null;
    g85Mark: { by: string; reason: string; at: number } | null;
  } | null;
}

export interface Overview {
  now: number;
  today: string;
  weekFrom: string;
  units: {
    total: number;
    online: number;
    offline: number;
    stopped: number;
    pending: number;
    revoked: number;
  };
  offline: UnitSummary[];
  attention: UnitSummary[];
  pending: UnitSummary[];
  todayTotals: Totals[];
  weekTotals: Totals[];
  bundles: BundleSummary[];
  chart: DailySeries;
  /** Alerts (issue 37): open (unacknowledged), acknowledged, deliveries that failed or are retried. */
  alerts: { open: number; acknowledged: number; failedDeliveries: number };
}
