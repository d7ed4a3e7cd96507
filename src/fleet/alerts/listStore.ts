/**
 * What the Alerts page, the overview and `vendd fleet alerts` read: alerts with their unit's label, the
 * open and acknowledged counts, and the deliveries that failed or are being retried.
 */
import type { AlertView, DeliveryProblem } from "./rows.js";
import type { AlertRule, AlertsDb } from "./schema.js";

export type { AlertView, DeliveryProblem } from "./rows.js";

export function alertSelect(db: AlertsDb) {
  return db
    .selectFrom("alerts as a")
    .leftJoin("units as u", "u.id", "a.unit_id")
    .select([
      "a.id",
      "a.unit_id",
      "u.label",
      "a.rule",
      "a.state",
      "a.detail",
      "a.opened_at",
      "a.resolved_at",
      "a.acked_by",
      "a.acked_at",
    ]);
}

type AlertRow = {
  id: string;
  unit_id: string;
  label: string | null;
  rule: AlertRule;
  state: "open" | "resolved";
  detail: string;
  opened_at: number;
  resolved_at: number | null;
  acked_by: string | null;
  acked_at: number | null;
};

export function toView(r: AlertRow): AlertView {
  return {
    id: r.id,
    unitId: r.unit_id,
    unitLabel: r.label,
    rule: r.rule,
    state: r.state === "resolved" ? "resolved" : r.acked_at === null ? "open" : "acknowledged",
    detail: r.detail,
    openedAt: Number(r.opened_at),
    resolvedAt: r.resolved_at === null ? null : Number(r.resolved_at),
    acknowledgedBy: r.acked_by,
    acknowledgedAt: r.acked_at === null ? null : Number(r.acked_at),
  };
}

/**
 * The alert as it was when change `kind` was made at `at` (what its message carries, however late it is
 * sent or re-sent): resolved only by its resolution; acknowledged only if that came before the change (opened and re-notified changes are only made unacknowledged).
 * Derived from the change's kind and time: the acknowledgement is only ever set once (no un-acknowledge).
 */
export function asAtChange(a: AlertView, kind: string, at: number): AlertView {
  if (kind === "resolved") return { ...a, state: "resolved", resolvedAt: at };
  const acked = a.acknowledgedAt !== null && a.acknowledgedAt < at;
  return {
    ...a,
    state: acked ? "acknowledged" : "open",
    resolvedAt: null,
    acknowledgedBy: acked ? a.acknowledgedBy : null,
    acknowledgedAt: acked ? a.acknowledgedAt : null,
  };
}

export interface AlertFilter {
  state?: "open" | "acknowledged" | "resolved" | "active";
  unit?: string;
  rule?: AlertRule;
  limit?: number;
}

/** Alerts newest first (`active`: open and acknowledged). */
export async function listAlerts(db: AlertsDb, f: AlertFilter = {}): Promise<AlertView[]> {
  let q = alertSelect(db);
  if (f.state === "resolved") q = q.where("a.state", "=", "resolved");
  else if (f.state !== undefined) q = q.where("a.state", "=", "open");
  if (f.state === "open") q = q.where("a.acked_at", "is", null);
  if (f.state === "acknowledged") q = q.where("a.acked_at", "is not", null);
  if (f.unit !== undefined) q = q.where("a.unit_id", "=", f.unit);
  if (f.rule !== undefined) q = q.where("a.rule", "=", f.rule);
  const rows = await q
    .orderBy("a.opened_at", "desc")
    .orderBy("a.id")
    .limit(f.limit ?? 500)
    .execute();
  return rows.map(toView);
}

export async function alertCounts(
  db: AlertsDb,
): Promise<{ open: number; acknowledged: number; failedDeliveries: number }> {
  const rows = await db
    .selectFrom("alerts")
    .select((eb) => [eb.fn.countAll<number>().as("n"), eb("acked_at", "is", null).as("unacked")])
    .where("state", "=", "open")
    .groupBy((eb) => eb("acked_at", "is", null))
    .execute();
  let open = 0;
  let acknowledged = 0;
  for (const r of rows) {
    const unacked = r.unacked === true || Number(r.unacked) === 1;
    if (unacked) open += Number(r.n);
    else acknowledged += Number(r.n);
  }
  const failed = await db
    .selectFrom("alert_deliveries")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where((eb) =>
      eb.or([eb("state", "=", "failed"), eb.and([eb("state", "=", "pending"), eb("attempts", ">", 0)])]),
    )
    .executeTakeFirstOrThrow();
  return { open, acknowledged, failedDeliveries: Number(failed.n) };
}

/** Deliveries that failed for good, or are being retried after a failure. */
export async function deliveryProblems(db: AlertsDb, limit = 100): Promise<DeliveryProblem[]> {
  const rows = await db
    .selectFrom("alert_deliveries as d")
    .innerJoin("alert_changes as c", "c.id", "d.change_id")
    .innerJoin("alerts as a", "a.id", "c.alert_id")
    .select([
      "d.change_id",
      "d.channel",
      "d.state",
      "d.attempts",
      "d.last_error",
      "a.id",
      "a.unit_id",
      "a.rule",
      "d.created_at",
    ])
    .where((eb) =>
      eb.or([
        eb("d.state", "=", "failed"),
        eb.and([eb("d.state", "=", "pending"), eb("d.attempts", ">", 0)]),
      ]),
    )
    .orderBy("d.created_at", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    changeId: r.change_id,
    channel: r.channel,
    state: r.state === "failed" ? "failed" : "pending",
    attempts: Number(r.attempts),
    lastError: r.last_error,
    alertId: r.id,
    unitId: r.unit_id,
    rule: r.rule,
    createdAt: Number(r.created_at),
  }));
}
