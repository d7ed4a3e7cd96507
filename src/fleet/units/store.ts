/**
 * The units list for the dashboard and `vendd fleet units` alike (one list, so both show the same backlog):
 * each unit's status, whether it is online (from its heartbeats), its versions, its backlog and what needs a
 * look.
 */
import { plural } from "../../core/plural.js";
import type { FleetContext } from "../context.js";
import type { UnitStatus, UnitSummary } from "./rows.js";

export type { UnitStatus, UnitSummary };

/** Units send a heartbeat every minute; one missing three is offline. */
export const HEARTBEAT_INTERVAL_MS = 60_000;
export const OFFLINE_AFTER_MS = 3 * HEARTBEAT_INTERVAL_MS;
/** A backlog this large, or this old, needs a look. */
export const BACKLOG_EVENTS_ALERT = 100;
export const BACKLOG_AGE_ALERT_MS = 15 * 60_000;

function attentionOf(u: UnitSummary, now: number): string[] {
  const out: string[] = [];
  if (u.unresolved > 0) out.push(plural(u.unresolved, "unresolved session", "unresolved sessions"));
  if (u.backlogEvents >= BACKLOG_EVENTS_ALERT)
    out.push(`backlog of ${plural(u.backlogEvents, "event", "events")}`);
  else if (
    u.backlogOldestAt !== null &&
    u.backlogEvents > 0 &&
    now - u.backlogOldestAt > BACKLOG_AGE_ALERT_MS
  )
    out.push(
      `backlog of ${plural(u.backlogEvents, "event", "events")}, oldest ${Math.round((now - u.backlogOldestAt) / 60_000)} min old`,
    );
  return out;
}

export async function listUnits(ctx: FleetContext): Promise<UnitSummary[]> {
  const now = ctx.clock.now();
  const rows = await ctx.db
    .selectFrom("units")
    .select([
      "id",
      "label",
      "status",
      "fingerprint",
      "enrolled_at",
      "last_seen_at",
      "config_version",
      "release_version",
      "backlog_events",
      "backlog_oldest_at",
      "unresolved",
      "committed_seq",
      "last_heartbeat",
    ])
    .orderBy("id")
    .execute();
  return rows.map((r) => {
    const lastSeenAt = r.last_seen_at === null ? null : Number(r.last_seen_at);
    const online = r.status === "approved" && lastSeenAt !== null && now - lastSeenAt <= OFFLINE_AFTER_MS;
    const hb = heartbeatFacts(r.last_heartbeat);
    const committedSeq = Number(r.committed_seq);
    const backlog = backlogBeyond(Number(r.backlog_events), hb.lastSeq, committedSeq);
    const u: UnitSummary = {
      id: r.id,
      label: r.label,
      status: r.status,
      fingerprint: r.fingerprint,
      enrolledAt: Number(r.enrolled_at),
      lastSeenAt,
      online,
      configVersion: r.config_version,
      releaseVersion: r.release_version,
      venddVersion: hb.vendd,
      backlogEvents: backlog,
      backlogOldestAt: backlog === 0 || r.backlog_oldest_at === null ? null : Number(r.backlog_oldest_at),
      unresolved: Number(r.unresolved),
      committedSeq,
      stopped: r.status === "approved" && !online && hb.state === "stopping",
      attention: [],
    };
    u.attention = attentionOf(u, now);
    return u;
  });
}

interface HeartbeatFacts {
  state: string | null;
  lastSeq: number | null;
  vendd: string | null;
}

/** What the overview needs of a unit's last heartbeat (stored as sent): its state, last seq, vendd version. */
function heartbeatFacts(json: string | null): HeartbeatFacts {
  const none: HeartbeatFacts = { state: null, lastSeq: null, vendd: null };
  if (json === null) return none;
  let hb: unknown;
  try {
    hb = JSON.parse(json);
  } catch {
    return none;
  }
  if (typeof hb !== "object" || hb === null) return none;
  const state = "state" in hb && typeof hb.state === "string" ? hb.state : null;
  const versions = "versions" in hb ? hb.versions : null;
  const vendd =
    typeof versions === "object" &&
    versions !== null &&
    "vendd" in versions &&
    typeof versions.vendd === "string"
      ? versions.vendd
      : null;
  const backlog = "backlog" in hb ? hb.backlog : null;
  const lastSeq =
    typeof backlog === "object" &&
    backlog !== null &&
    "lastSeq" in backlog &&
    typeof backlog.lastSeq === "number"
      ? backlog.lastSeq
      : null;
  return { state, lastSeq, vendd };
}

/**
 * The backlog the fleet does not hold yet: what the last heartbeat reported, less what was committed since
 * (its events end at its `lastSeq`; the fleet has every event up to its committed seq).
 */
export function backlogBeyond(reported: number, lastSeq: number | null, committedSeq: number): number {
  if (lastSeq === null) return reported;
  return Math.max(0, Math.min(reported, lastSeq - committedSeq));
}

/**
 * Enrolment decisions: a manager approves a pending unit, or revokes a unit (pending or approved). A revoked
 * unit's requests are refused from then on; its events already stored stay. Used by the CLI
 * (`vendd fleet approve|revoke`) and the dashboard's forms alike.
 */
export type DecisionResult = "done" | "notFound" | "alreadyRevoked";

export async function approveUnit(ctx: FleetContext, unitId: string, by: string): Promise<DecisionResult> {
  const unit = await ctx.db
    .selectFrom("units")
    .select(["status"])
    .where("id", "=", unitId)
    .executeTakeFirst();
  if (unit === undefined) return "notFound";
  if (unit.status === "revoked") return "alreadyRevoked";
  await ctx.db
    .updateTable("units")
    .set({ status: "approved", decided_by: by, decided_at: ctx.clock.now() })
    .where("id", "=", unitId)
    .where("status", "=", "pending")
    .execute();
  ctx.logger.info({ unitId, by }, "unit approved");
  return "done";
}

export async function revokeUnit(ctx: FleetContext, unitId: string, by: string): Promise<DecisionResult> {
  const result = await ctx.db
    .updateTable("units")
    .set({ status: "revoked", decided_by: by, decided_at: ctx.clock.now() })
    .where("id", "=", unitId)
    .where("status", "!=", "revoked")
    .executeTakeFirst();
  if (result.numUpdatedRows > 0n) {
    ctx.logger.warn({ unitId, by }, "unit revoked");
    return "done";
  }
  const unit = await ctx.db
    .selectFrom("units")
    .select(["status"])
    .where("id", "=", unitId)
    .executeTakeFirst();
  return unit === undefined ? "notFound" : "alreadyRevoked";
}

/** How many enrolments wait for a manager's decision (`POST /enroll`'s cap). */
export async function pendingCount(ctx: FleetContext): Promise<number | string | bigint> {
  const pending = await ctx.db
    .selectFrom("units")
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
    .where("status", "=", "pending")
    .executeTakeFirstOrThrow();
  return pending.n;
}

/** A new key's unit, pending; false when its id (or key) is already taken and nothing was written. */
export async function insertPendingUnit(
  ctx: FleetContext,
  u: { id: string; publicKey: string; fingerprint: string; label: string },
): Promise<boolean> {
  const inserted = await ctx.db
    .insertInto("units")
    .values({
      id: u.id,
      public_key: u.publicKey,
      fingerprint: u.fingerprint,
      label: u.label,
      status: "pending",
      enrolled_at: ctx.clock.now(),
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return inserted.numInsertedOrUpdatedRows !== 0n;
}

/** The unit enrolled with `publicKey` (id and status), if any. */
export async function unitOfKey(ctx: FleetContext, publicKey: string) {
  return ctx.db
    .selectFrom("units")
    .select(["id", "status"])
    .where("public_key", "=", publicKey)
    .executeTakeFirst();
}

/** The unit's last heartbeat as stored (JSON text), or null. */
export async function lastHeartbeatOf(ctx: FleetContext, unitId: string): Promise<string | null> {
  const row = await ctx.db
    .selectFrom("units")
    .select("last_heartbeat")
    .where("id", "=", unitId)
    .executeTakeFirst();
  return row?.last_heartbeat ?? null;
}

/** Deletes nonces whose timestamp window has passed (a replay of them is refused as clock skew). */
export async function purgeNonces(ctx: FleetContext): Promise<number> {
  const r = await ctx.db.deleteFrom("nonces").where("expires_at", "<", ctx.clock.now()).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** The public keys of up to `limit` approved units (the server warms its key cache with them). */
export async function approvedKeys(ctx: FleetContext, limit: number): Promise<{ public_key: string }[]> {
  return ctx.db
    .selectFrom("units")
    .select("public_key")
    .where("status", "=", "approved")
    .limit(limit)
    .execute();
}
