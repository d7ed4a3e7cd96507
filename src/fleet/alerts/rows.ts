/**
 * The shapes the alerts store returns and the views render (views.ts imports these, never the store):
 * an alert with its unit's label, a delivery that failed or is retried, a delivery that is due.
 */
import type { AlertRule, ChangeKind } from "./schema.js";

export interface AlertView {
  id: string;
  unitId: string;
  unitLabel: string | null;
  rule: AlertRule;
  state: "open" | "acknowledged" | "resolved";
  detail: string;
  openedAt: number;
  resolvedAt: number | null;
  acknowledgedBy: string | null;
  acknowledgedAt: number | null;
}

export interface DeliveryProblem {
  changeId: string;
  channel: string;
  state: "pending" | "failed";
  attempts: number;
  lastError: string | null;
  alertId: string;
  unitId: string;
  rule: AlertRule;
  createdAt: number;
}

export interface DueDelivery {
  changeId: string;
  channel: string;
  attempts: number;
  kind: ChangeKind;
  at: number;
  runId: string | null;
  detail: string;
  alert: AlertView;
}

/** A change a silence kept from being sent (recorded, not delivered). */
export interface SilencedChange {
  changeId: string;
  kind: string;
  at: number;
  detail: string;
  alertId: string;
  unitId: string;
  rule: AlertRule;
  silenceId: string;
  silenceKind: "silence" | "maintenance" | null;
  silenceReason: string | null;
}
