/**
 * Every read and write of the alert tables (Kysely, the same on SQLite and PostgreSQL): the evaluator's
 * lease, an alert's life applied with its changes and their deliveries in one transaction (the outbox),
 * claiming and settling deliveries, the lists the page and the CLI show, and acknowledgements.
 */
import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import type { LifeAction, OpenAlert } from "./life.js";
import { alertSelect, asAtChange, toView } from "./listStore.js";
import type { DueDelivery } from "./rows.js";
import type { AlertsDatabase, AlertsDb, ChangeKind } from "./schema.js";

export {
  type AlertFilter,
  type AlertView,
  alertCounts,
  type DeliveryProblem,
  deliveryProblems,
  listAlerts,
} from "./listStore.js";
export type { DueDelivery } from "./rows.js";

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
    .select(["id", "unit_id", "rule", "detail", "last_true_at", "last_notified_at", "acked_at", "silenced"])
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
    silenced: Number(r.silenced) === 1,
  }));
}

/**
 * Where a change goes (issue 42): its receivers' channels (routing), or, when a silence or maintenance
 * window matches it, no channel and that silence's id (the change is recorded, not sent).
 */
export interface ChangeTarget {
  channels: readonly string[];
  silencedBy: string | null;
}

async function addChange(
  tx: Transaction<AlertsDatabase>,
  alertId: string,
  kind: ChangeKind,
  at: number,
  detail: string,
  runId: string | null,
  target: ChangeTarget,
  actor: string | null = null,
): Promise<string> {
  const id = randomUUID();
  const silencedBy = target.silencedBy;
  await tx
    .insertInto("alert_changes")
    .values({ id, alert_id: alertId, kind, at, actor, detail, run_id: runId, silenced_by: silencedBy })
    .execute();
  const channels = silencedBy === null ? target.channels : [];
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

const NOWHERE: ChangeTarget = { channels: [], silencedBy: null };

/**
 * Applies one action of {@link planLife} in its own transaction; the change ids it made. A message kept
 * back by a silence marks the alert `silenced` (sent once the silence has ended, if it is still open).
 */
export async function applyAction(
  db: AlertsDb,
  a: LifeAction,
  now: number,
  runId: string,
  target: ChangeTarget,
): Promise<string[]> {
  const silenced = target.silencedBy === null ? 0 : 1;
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
          silenced,
        })
        .execute();
      return [await addChange(tx, id, "opened", now, a.detail, runId, target)];
    }
    if (a.kind === "hold") {
      const r = await tx
        .updateTable("alerts")
        .set({
          detail: a.detail,
          last_true_at: now,
          ...(a.renotify ? { last_notified_at: now, silenced } : {}),
        })
        .where("id", "=", a.id)
        .where("state", "=", "open")
        .executeTakeFirst();
      if (!a.renotify || Number(r.numUpdatedRows) !== 1) return [];
      return [await addChange(tx, a.id, "renotified", now, a.detail, runId, target)];
    }
    const r = await tx
      .updateTable("alerts")
      .set({ state: "resolved", resolved_at: now, silenced })
      .where("id", "=", a.id)
      .where("state", "=", "open")
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return [];
    return [await addChange(tx, a.id, "resolved", now, a.detail, runId, target)];
  });
}

/** The open alerts `ids` still hold at `now` (their detail unchanged): one update, in chunks of 500. */
export async function touchHeld(db: AlertsDb, ids: readonly string[], now: number): Promise<void> {
  for (let i = 0; i < ids.length; i += 500)
    await db
      .updateTable("alerts")
      .set({ last_true_at: now })
      .where("id", "in", ids.slice(i, i + 500))
      .where("state", "=", "open")
      .execute();
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
    await addChange(tx, alertId, "acknowledged", now, `acknowledged by ${by}`, null, NOWHERE, by);
    return true;
  });
}

/**
 * Takes an acknowledgement back (issue 42): the alert is open and unacknowledged again, so re-notifications
 * resume (the next one `renotifyMinutes` after the last message); who and when are kept as a change.
 * False when the alert is not open or not acknowledged.
 */
export async function unacknowledge(
  db: AlertsDb,
  alertId: string,
  by: string,
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const r = await tx
      .updateTable("alerts")
      .set({ acked_by: null, acked_at: null })
      .where("id", "=", alertId)
      .where("state", "=", "open")
      .where("acked_at", "is not", null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await addChange(
      tx,
      alertId,
      "unacknowledged",
      now,
      `acknowledgement taken back by ${by}`,
      null,
      NOWHERE,
      by,
    );
    return true;
  });
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
    alert: asAtChange(toView(row), row.kind, Number(row.at)),
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
