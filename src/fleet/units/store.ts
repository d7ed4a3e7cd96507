/**
 * The units list for the dashboard: each unit's status, whether it is online (from its heartbeats), its
 * backlog and what needs a look.
 */
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
  if (u.unresolved > 0) out.push(`${u.unresolved} unresolved session(s)`);
  if (u.backlogEvents >= BACKLOG_EVENTS_ALERT) out.push(`backlog of ${u.backlogEvents} events`);
  else if (
    u.backlogOldestAt !== null &&
    u.backlogEvents > 0 &&
    now - u.backlogOldestAt > BACKLOG_AGE_ALERT_MS
  )
    out.push(
      `backlog of ${u.backlogEvents} events, oldest ${Math.round((now - u.backlogOldestAt) / 60_000)} min old`,
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

/** What the overview needs of a unit's last heartbeat (stored as sent): its state and its last seq. */
function heartbeatFacts(json: string | null): { state: string | null; lastSeq: number | null } {
  if (json === null) return { state: null, lastSeq: null };
  let hb: unknown;
  try {
    hb = JSON.parse(json);
  } catch {
    return { state: null, lastSeq: null };
  }
  if (typeof hb !== "object" || hb === null) return { state: null, lastSeq: null };
  const state = "state" in hb && typeof hb.state === "string" ? hb.state : null;
  const backlog = "backlog" in hb ? hb.backlog : null;
  const lastSeq =
    typeof backlog === "object" &&
    backlog !== null &&
    "lastSeq" in backlog &&
    typeof backlog.lastSeq === "number"
      ? backlog.lastSeq
      : null;
  return { state, lastSeq };
}

/**
 * The backlog the fleet does not hold yet: what the last heartbeat reported, less what was committed since
 * (its events end at its `lastSeq`; the fleet has every event up to its committed seq).
 */
export function backlogBeyond(reported: number, lastSeq: number | null, committedSeq: number): number {
  if (lastSeq === null) return reported;
  return Math.max(0, Math.min(reported, lastSeq - committedSeq));
}
