/**
 * Every read and write of the alert tables (Kysely, the same on SQLite and PostgreSQL): the evaluator's
 * lease, an alert's life applied with its changes and their deliveries in one transaction (the outbox),
 * claiming and settling deliveries, the lists the page and the CLI show, and acknowledgements.
 */
import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import type { LifeAction, OpenAlert } from "./life.js";
import type { AlertRule, AlertsDatabase, AlertsDb, ChangeKind } from "./schema.js";

/**
 * Takes (or renews) the lease `name` for `holder` until `now + ms`: true when this holder has it. A lease
 * whose time has passed is free, so a crashed holder's work is taken over; two takers at once get one row
 * lock, and the second's condition no longer matches.
 */
export async function takeLease(
  db: AlertsDb,
  name: string,
  holder: string,
  now: number,
  ms: number,
): Promise<boolean> {
  await db
    .insertInto("alert_lease")
    .values({ name, holder, until: now + ms })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const r = await db
    .updateTable("alert_lease")
    .set({ holder, until: now + ms })
    .where("name", "=", name)
    .where((eb) => eb.or([eb("holder", "=", holder), eb("until", "<", now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Gives the lease up (a clean stop): another process may take it at once. */
export async function releaseLease(db: AlertsDb, name: string, holder: string): Promise<void> {
  await db
    .updateTable("alert_lease")
    .set({ until: 0 })
    .where("name", "=", name)
    .where("holder", "=", holder)
    .execute();
}

export async function openAlerts(db: AlertsDb): Promise<OpenAlert[]> {
  const rows = await db
    .selectFrom("alerts")
    .select(["id", "unit_id", "rule", "detail", "last_true_at", "last_notified_at", "acked_at"])
    .where("state", "=", "open")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    unitId: r.unit_id,
    rule: r.rule,
    detail: r.detail,
    lastTrueAt: Number(r.last_true_at),
    lastNotifiedAt: Number(r.last_notified_at),
    ackedAt: r.acked_at === null ? null : Number(r.acked_at),
  }));
}

async function addChange(
  tx: Transaction<AlertsDatabase>,
  alertId: string,
  kind: ChangeKind,
  at: number,
  detail: string,
  runId: string | null,
  channels: readonly string[],
  actor: string | null = null,
): Promise<string> {
  const id = randomUUID();
  await tx
    .insertInto("alert_changes")
    .values({ id, alert_id: alertId, kind, at, actor, detail, run_id: runId })
    .execute();
  if (channels.length > 0)
    await tx
      .insertInto("alert_deliveries")
      .values(
        channels.map((channel) => ({
          change_id: id,
          channel,
          state: "pending" as const,
          attempts: 0,
          next_at: at,
          claimed_until: null,
          last_error: null,
          sent_at: null,
          created_at: at,
        })),
      )
      .execute();
  return id;
}

/** Applies one action of {@link planLife} in its own transaction; the change ids it made. */
export async function applyAction(
  db: AlertsDb,
  a: LifeAction,
  now: number,
  runId: string,
  channels: readonly string[],
): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    if (a.kind === "open") {
      const id = randomUUID();
      await tx
        .insertInto("alerts")
        .values({
          id,
          unit_id: a.unitId,
          rule: a.rule,
          state: "open",
          detail: a.detail,
          opened_at: now,
          last_true_at: now,
          last_notified_at: now,
          resolved_at: null,
          acked_by: null,
          acked_at: null,
        })
        .execute();
      return [await addChange(tx, id, "opened", now, a.detail, runId, channels)];
    }
    if (a.kind === "hold") {
      const r = await tx
        .updateTable("alerts")
        .set({ detail: a.detail, last_true_at: now, ...(a.renotify ? { last_notified_at: now } : {}) })
        .where("id", "=", a.id)
        .where("state", "=", "open")
        .executeTakeFirst();
      if (!a.renotify || Number(r.numUpdatedRows) !== 1) return [];
      return [await addChange(tx, a.id, "renotified", now, a.detail, runId, channels)];
    }
    const r = await tx
      .updateTable("alerts")
      .set({ state: "resolved", resolved_at: now })
      .where("id", "=", a.id)
      .where("state", "=", "open")
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return [];
    return [await addChange(tx, a.id, "resolved", now, a.detail, runId, channels)];
  });
}

/** Records a manager's acknowledgement (who and when, also as a change); false when not open or already. */
export async function acknowledge(db: AlertsDb, alertId: string, by: string, now: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const r = await tx
      .updateTable("alerts")
      .set({ acked_by: by, acked_at: now })
      .where("id", "=", alertId)
      .where("state", "=", "open")
      .where("acked_at", "is", null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await addChange(tx, alertId, "acknowledged", now, `acknowledged by ${by}`, null, [], by);
    return true;
  });
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

/** The deliveries that are due and not claimed by a live sender (up to `limit`), oldest first; unclaimed. */
export async function dueDeliveries(db: AlertsDb, now: number, limit = 200): Promise<DueDelivery[]> {
  const rows = await alertSelect(db)
    .innerJoin("alert_changes as c", "c.alert_id", "a.id")
    .innerJoin("alert_deliveries as d", "d.change_id", "c.id")
    .select([
      "d.change_id",
      "d.channel",
      "c.kind",
      "c.at",
      "c.run_id",
      "c.detail as change_detail",
      "d.attempts",
    ])
    .where("d.state", "=", "pending")
    .where("d.next_at", "<=", now)
    .where((eb) => eb.or([eb("d.claimed_until", "is", null), eb("d.claimed_until", "<", now)]))
    .orderBy("d.created_at")
    .orderBy("d.change_id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    changeId: row.change_id,
    channel: row.channel,
    attempts: Number(row.attempts),
    kind: row.kind,
    at: Number(row.at),
    runId: row.run_id,
    detail: row.change_detail,
    alert: toView(row),
  }));
}

/**
 * Claims `d` until `now + claimMs` for one send: false when it is sent already or another sender's claim
 * is still running. Claimed right before its send, so a claim outlives the send it covers (the send's
 * timeouts are shorter) and a crashed sender's claim expires soon after.
 */
export async function claimDelivery(
  db: AlertsDb,
  d: Pick<DueDelivery, "changeId" | "channel">,
  now: number,
  claimMs: number,
): Promise<boolean> {
  const r = await db
    .updateTable("alert_deliveries")
    .set({ claimed_until: now + claimMs })
    .where("change_id", "=", d.changeId)
    .where("channel", "=", d.channel)
    .where("state", "=", "pending")
    .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<", now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function markSent(db: AlertsDb, changeId: string, channel: string, now: number): Promise<void> {
  await db
    .updateTable("alert_deliveries")
    .set({ state: "sent", sent_at: now, claimed_until: null, last_error: null })
    .where("change_id", "=", changeId)
    .where("channel", "=", channel)
    .execute();
}

/** A failed attempt: retried after `retryMs`, or `failed` for good after `maxAttempts`. */
export async function markAttemptFailed(
  db: AlertsDb,
  d: Pick<DueDelivery, "changeId" | "channel" | "attempts">,
  error: string,
  now: number,
  retryMs: number,
  maxAttempts: number,
): Promise<void> {
  const attempts = d.attempts + 1;
  await db
    .updateTable("alert_deliveries")
    .set({
      attempts,
      state: attempts >= maxAttempts ? "failed" : "pending",
      next_at: now + retryMs,
      claimed_until: null,
      last_error: error.slice(0, 500),
    })
    .where("change_id", "=", d.changeId)
    .where("channel", "=", d.channel)
    .execute();
}

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

function alertSelect(db: AlertsDb) {
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

function toView(r: AlertRow): AlertView {
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
