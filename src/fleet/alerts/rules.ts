/**
 * The alert rules: pure functions from what the fleet knows (a {@link Snapshot}, read by snapshotStore.ts) to the
 * conditions that hold now ({@link Finding}). No clock, no database: the evaluator passes `now`.
 */

import { durationWords } from "./duration.js";
import type { AlertRule } from "./schema.js";
import type { AlertRules } from "./settings.js";

export interface UnitFacts {
  id: string;
  label: string;
  lastSeenAt: number | null;
  /** When a manager approved it (its offline timer starts there before its first heartbeat), null if unknown. */
  approvedAt: number | null;
  /** The state of its last heartbeat (`stopping` when it said it was stopping), null before any. */
  state: string | null;
  backlogEvents: number;
  backlogOldestAt: number | null;
  /** Sessions the unit reports unresolved: unsettled, or open longer than the engine's bound. */
  unresolved: number;
}

export interface Snapshot {
  now: number;
  /** When this evaluator started: units are not offline for the time the fleet itself was down. */
  startedAt: number;
  /**
   * Units with an `offline` alert open now: for them the start-up clamp does not apply. Their silence runs
   * on through a fleet restart, so a restart never makes the condition look clear (and resolve the alert).
   */
  openOffline: ReadonlySet<string>;
  units: UnitFacts[];
  /** Sales per unit in the silent window ending now. */
  salesNow: ReadonlyMap<string, number>;
  /** Sales per unit in the same window 1..weeks weeks ago (index 0 = a week ago). */
  salesWeeksAgo: readonly ReadonlyMap<string, number>[];
  /** Per unit, its sessions' vends newest first, within the look-back. */
  vends: ReadonlyMap<string, readonly { ok: number; failed: number }[]>;
  /**
   * Sessions flagged for review per unit within the look-back, by why: no vend outcome arrived (settled by
   * the unit's unknown-outcome policy, e.g. captured), or a settlement conflict (anything else flagged).
   */
  review: ReadonlyMap<string, ReviewCounts>;
  /** The newest reconciliation run and its differences per unit (`*`: lines no unit owns). */
  recon: { runId: number; fromDay: string; toDay: string; differences: ReadonlyMap<string, number> } | null;
  /** The newest entitlement list's end of validity (plans), null without one. */
  entitlementsValidUntil: number | null;
  /** Units whose newest rollout, within the look-back, was rolled back or refused. */
  rolledBack: ReadonlyMap<string, { bundleId: string; reason: string }>;
}

export interface ReviewCounts {
  noOutcome: number;
  conflict: number;
}

export interface Finding {
  /** A unit id, or `*` for the fleet as a whole. */
  unitId: string;
  rule: AlertRule;
  detail: string;
}

const MIN = 60_000;

/**
 * How long a unit has been silent when that counts as offline now, else null. Silence runs from its last
 * heartbeat, or from its approval before its first one. The start-up clamp (silence counted from the
 * fleet's start at the earliest, so the fleet's own outage opens no alert) applies to opening an alert
 * only: a unit whose `offline` alert is open keeps its real silence, and its alert stays open.
 */
export function offlineFor(u: UnitFacts, s: Snapshot, minutes: number): number | null {
  if (u.state === "stopping") return null; // it said it was stopping: stopped, not offline
  const heard = u.lastSeenAt ?? u.approvedAt ?? 0;
  const seen = s.openOffline.has(u.id) ? heard : Math.max(heard, s.startedAt);
  const silentMs = s.now - seen;
  return silentMs >= minutes * MIN ? silentMs : null;
}

function isOnline(u: UnitFacts, s: Snapshot, offlineMinutes: number): boolean {
  return u.state !== "stopping" && offlineFor(u, s, offlineMinutes) === null && u.lastSeenAt !== null;
}

/** Every condition that holds in `s` under the thresholds `r`. */
export function evaluateRules(s: Snapshot, r: AlertRules): Finding[] {
  const out: Finding[] = [];
  const offlineMinutes = r.offline === false ? 10 : r.offline.minutes;
  for (const u of s.units) {
    const online = isOnline(u, s, offlineMinutes);
    if (r.offline !== false) {
      const ms = offlineFor(u, s, r.offline.minutes);
      if (ms !== null)
        out.push({
          unitId: u.id,
          rule: "offline",
          detail:
            u.lastSeenAt === null
              ? "no heartbeat since it was approved"
              : `no heartbeat for ${durationWords(s.now - u.lastSeenAt)}`,
        });
    }
    if (r.silent !== false && online) {
      const f = silent(u.id, s, r.silent.minExpected, r.silent.windowMinutes);
      if (f !== null) out.push(f);
    }
    if (r.vendFailures !== false) {
      const f = vendFailures(u.id, s.vends.get(u.id) ?? [], r.vendFailures.lastVends, r.vendFailures.share);
      if (f !== null) out.push(f);
    }
    if (r.stuckMoney !== false && u.unresolved > 0)
      out.push({
        unitId: u.id,
        rule: "stuckMoney",
        detail: `${u.unresolved} session(s) unresolved past the engine's bound`,
      });
    const reviews = s.review.get(u.id);
    if (r.review !== false && reviews !== undefined && reviews.noOutcome + reviews.conflict > 0)
      out.push({ unitId: u.id, rule: "review", detail: reviewDetail(reviews) });
    if (r.backlog !== false && online) {
      const f = backlog(u, s.now, r.backlog.events, r.backlog.ageMinutes);
      if (f !== null) out.push(f);
    }
    const rb = s.rolledBack.get(u.id);
    if (r.rollout !== false && rb !== undefined)
      out.push({
        unitId: u.id,
        rule: "rollout",
        detail: `bundle ${rb.bundleId} rolled back or refused: ${rb.reason}`,
      });
  }
  if (r.reconciliation !== false && s.recon !== null) {
    const run = s.recon;
    for (const [unitId, n] of run.differences)
      out.push({
        unitId,
        rule: "reconciliation",
        detail: `reconciliation run ${run.runId} (${run.fromDay}..${run.toDay}): ${n} difference(s)`,
      });
  }
  if (r.entitlements !== false && s.entitlementsValidUntil !== null) {
    const left = s.entitlementsValidUntil - s.now;
    if (left < r.entitlements.hours * 60 * MIN)
      out.push({
        unitId: "*",
        rule: "entitlements",
        detail:
          left <= 0
            ? "the entitlement list units hold has expired"
            : `the entitlement list units hold expires in ${durationWords(left)}`,
      });
  }
  return out;
}

/** Why sessions were flagged, named: a missing vend outcome is not a settlement conflict. */
export function reviewDetail(c: ReviewCounts): string {
  const parts: string[] = [];
  if (c.noOutcome > 0)
    parts.push(
      `${c.noOutcome} session(s) for review: no vend outcome arrived (settled by the unknown-outcome policy)`,
    );
  if (c.conflict > 0) parts.push(`${c.conflict} session(s) for review: settlement conflict`);
  return parts.join("; ");
}

/** No sale in the window while the same hours of the week usually have `minExpected` or more. */
export function silent(
  unitId: string,
  s: Snapshot,
  minExpected: number,
  windowMinutes: number,
): Finding | null {
  if ((s.salesNow.get(unitId) ?? 0) > 0 || s.salesWeeksAgo.length === 0) return null;
  const past = s.salesWeeksAgo.map((m) => m.get(unitId) ?? 0);
  const usual = past.reduce((a, b) => a + b, 0) / past.length;
  if (usual < minExpected) return null;
  return {
    unitId,
    rule: "silent",
    detail: `no sale in ${windowMinutes} min; these hours of the week usually have ${usual.toFixed(1)}`,
  };
}

/** The share of failed vends over the unit's last `lastVends` vends (needs that many). */
export function vendFailures(
  unitId: string,
  sessions: readonly { ok: number; failed: number }[],
  lastVends: number,
  share: number,
): Finding | null {
  let ok = 0;
  let failed = 0;
  for (const v of sessions) {
    if (ok + failed >= lastVends) break;
    ok += v.ok;
    failed += v.failed;
  }
  const n = ok + failed;
  if (n < lastVends || failed / n < share) return null;
  return {
    unitId,
    rule: "vendFailures",
    detail: `${failed} of the last ${n} vends failed (threshold ${Math.round(share * 100)} %)`,
  };
}

export function backlog(u: UnitFacts, now: number, events: number, ageMinutes: number): Finding | null {
  const age = u.backlogOldestAt === null || u.backlogEvents === 0 ? 0 : now - u.backlogOldestAt;
  if (u.backlogEvents < events && age < ageMinutes * MIN) return null;
  return {
    unitId: u.id,
    rule: "backlog",
    detail: `${u.backlogEvents} event(s) not yet committed by the fleet, oldest ${durationWords(age)} old`,
  };
}
