/**
 * Tables of fleet alerts (issue 37), created by migration `0007_alerts` (./migration.ts). Same conventions
 * as src/fleet/db/schema.ts: times in epoch ms, booleans 0/1, JSON documents as text.
 *
 * - `alerts`: one row per alert; at most one `open` row per (unit, rule) (a partial unique index), so an
 *   alert is opened once however many evaluators or runs see its condition.
 * - `alert_changes`: what happened to an alert (opened, renotified, resolved, acknowledged), each with a
 *   random change id: the id webhooks and mails carry, so a receiver can drop a repeat.
 * - `alert_deliveries`: one row per change and channel, written in the transaction that records the change
 *   (an outbox): a crash between the change and its delivery loses nothing; a delivery is marked sent only
 *   after the receiver answered, so a crash in between re-sends the same change id.
 * - `alert_lease`: the evaluator's lease: one fleet process evaluates and delivers at a time.
 * - `alert_silences` (issue 42, `0011_alert_silences`): silences and maintenance windows by unit, group and
 *   rule; a change they match is recorded with `silenced_by`, and gets no delivery.
 */
import type { Kysely } from "kysely";
import type { FleetContext } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";

export type AlertRule =
  | "offline"
  | "silent"
  | "vendFailures"
  | "stuckMoney"
  | "review"
  | "backlog"
  | "reconciliation"
  | "entitlements"
  | "rollout";

export const ALERT_RULES: readonly AlertRule[] = [
  "offline",
  "silent",
  "vendFailures",
  "stuckMoney",
  "review",
  "backlog",
  "reconciliation",
  "entitlements",
  "rollout",
];

export interface AlertsTable {
  id: string;
  /** The unit's id, or `*` for a fleet-wide alert (a reconciliation difference no unit owns, entitlements). */
  unit_id: string;
  rule: AlertRule;
  state: "open" | "resolved";
  /** What the rule saw, one line (the latest while open). */
  detail: string;
  opened_at: number;
  /** The last evaluation in which the condition held. */
  last_true_at: number;
  /** The last time a message went out for it (opened or renotified). */
  last_notified_at: number;
  resolved_at: number | null;
  acked_by: string | null;
  acked_at: number | null;
  /** 1: its last message was kept back by a silence (migration 0011): sent when the silence has ended. */
  silenced: number;
}

export type ChangeKind = "opened" | "renotified" | "resolved" | "acknowledged" | "unacknowledged";

export interface AlertChangesTable {
  /** Random (UUID): the id a webhook or mail carries. */
  id: string;
  alert_id: string;
  kind: ChangeKind;
  at: number;
  /** Who (acknowledged), else null. */
  actor: string | null;
  detail: string;
  /** The evaluation run that made it (digest grouping); null for an acknowledgement. */
  run_id: string | null;
  /** The silence or maintenance window that kept it from being sent (recorded, no delivery); migration 0011. */
  silenced_by: string | null;
}

export interface AlertDeliveriesTable {
  change_id: string;
  /** `mail`, or `webhook:<name>`. */
  channel: string;
  state: "pending" | "sent" | "failed";
  attempts: number;
  /** Not before this time (backoff). */
  next_at: number;
  /** A process sending it holds it until then; a crashed sender's claim expires. */
  claimed_until: number | null;
  last_error: string | null;
  sent_at: number | null;
  created_at: number;
}

/** A silence or maintenance window (issue 42, migration `0011_alert_silences`): null matchers match any. */
export interface AlertSilencesTable {
  id: string;
  kind: "silence" | "maintenance";
  unit_id: string | null;
  group_name: string | null;
  rule: AlertRule | null;
  starts_at: number;
  ends_at: number;
  created_by: string;
  reason: string;
  created_at: number;
  updated_by: string | null;
  updated_at: number | null;
}

export interface AlertLeaseTable {
  name: string;
  holder: string;
  until: number;
}

export interface AlertsDatabase extends FleetDatabase {
  alerts: AlertsTable;
  alert_changes: AlertChangesTable;
  alert_deliveries: AlertDeliveriesTable;
  alert_lease: AlertLeaseTable;
  alert_silences: AlertSilencesTable;
}

export type AlertsDb = Kysely<AlertsDatabase>;

/** The fleet database with the alert tables (migration 0007_alerts is part of every fleet database). */
export function alertsDb(ctx: Pick<FleetContext, "db">): AlertsDb {
  return ctx.db as unknown as AlertsDb;
}
