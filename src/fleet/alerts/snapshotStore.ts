/**
 * Reads what the rules need from the fleet's own tables (units and their last heartbeat, sales, session
 * events, reconciliation runs, entitlement lists, rollouts), the same Kysely queries on SQLite and
 * PostgreSQL. Every read is bounded by a time window or a `group by`.
 */
import { sql } from "kysely";
import type { FleetContext } from "../context.js";
import { dayOf } from "../context.js";
import type { ReviewCounts, Snapshot, UnitFacts } from "./rules.js";
import type { AlertRules } from "./settings.js";

const MIN = 60_000;
const WEEK = 7 * 24 * 60 * MIN;
/** Reconciliation classes that are a difference. */
const DIFFERENCES = ["missingInReport", "unknownInFleet", "amountMismatch", "refundUnmatched"];

function heartbeatState(json: string | null): string | null {
  if (json === null) return null;
  try {
    const v: unknown = JSON.parse(json);
    if (typeof v === "object" && v !== null && "state" in v && typeof v.state === "string") return v.state;
  } catch {
    // a heartbeat the fleet stored is valid JSON; anything else counts as no state
  }
  return null;
}

async function units(ctx: FleetContext): Promise<UnitFacts[]> {
  const rows = await ctx.db
    .selectFrom("units")
    .select([
      "id",
      "label",
      "last_seen_at",
      "decided_at",
      "last_heartbeat",
      "backlog_events",
      "backlog_oldest_at",
      "unresolved",
    ])
    .where("status", "=", "approved")
    .orderBy("id")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    label: r.label,
    lastSeenAt: r.last_seen_at === null ? null : Number(r.last_seen_at),
    approvedAt: r.decided_at === null ? null : Number(r.decided_at),
    state: heartbeatState(r.last_heartbeat),
    backlogEvents: Number(r.backlog_events),
    backlogOldestAt: r.backlog_oldest_at === null ? null : Number(r.backlog_oldest_at),
    unresolved: Number(r.unresolved),
  }));
}

/** Sessions per unit closed in [from, to). */
async function salesIn(ctx: FleetContext, from: number, to: number): Promise<Map<string, number>> {
  const rows = await ctx.db
    .selectFrom("sales")
    .select((eb) => ["unit_id", eb.fn.countAll<number>().as("n")])
    .where("day", ">=", dayOf(from, ctx.timeZone))
    .where("day", "<=", dayOf(to, ctx.timeZone))
    .where("closed_at", ">=", from)
    .where("closed_at", "<", to)
    .where("result", "=", "captured")
    .groupBy("unit_id")
    .execute();
  return new Map(rows.map((r) => [r.unit_id, Number(r.n)]));
}

/**
 * Each unit's newest `perUnit` sessions with vends since `since`, newest first: a window function
 * (`row_number() over (partition by unit_id …)`, SQLite 3.25+ and PostgreSQL), so only those rows leave
 * the database.
 */
async function vends(
  ctx: FleetContext,
  since: number,
  perUnit: number,
): Promise<Map<string, { ok: number; failed: number }[]>> {
  const ranked = ctx.db
    .selectFrom("sales")
    .select([
      "unit_id",
      "vends_ok",
      "vends_failed",
      "closed_at",
      "seq",
      sql<number>`row_number() over (partition by unit_id order by closed_at desc, seq desc)`.as("rn"),
    ])
    .where("day", ">=", dayOf(since, ctx.timeZone))
    .where("closed_at", ">=", since)
    .where((eb) => eb.or([eb("vends_ok", ">", 0), eb("vends_failed", ">", 0)]));
  const rows = await ctx.db
    .selectFrom(ranked.as("r"))
    .select(["r.unit_id", "r.vends_ok", "r.vends_failed"])
    .where("r.rn", "<=", perUnit)
    .orderBy("r.unit_id")
    .orderBy("r.rn")
    .execute();
  const out = new Map<string, { ok: number; failed: number }[]>();
  for (const r of rows) {
    const list = out.get(r.unit_id) ?? [];
    if (list.length === 0) out.set(r.unit_id, list);
    list.push({ ok: Number(r.vends_ok), failed: Number(r.vends_failed) });
  }
  return out;
}

/** Whether a flagged session's vends include one whose outcome never arrived (null or unknown). */
function noOutcome(json: string): boolean {
  try {
    const v: unknown = JSON.parse(json);
    if (typeof v !== "object" || v === null || !("vends" in v) || !Array.isArray(v.vends)) return false;
    return v.vends.some(
      (x: unknown) =>
        typeof x === "object" &&
        x !== null &&
        "outcome" in x &&
        (x.outcome === null || x.outcome === "unknown"),
    );
  } catch {
    return false; // the fleet stores valid JSON; anything else is not a missing outcome
  }
}

/** Sessions flagged for review per unit since `since`, by why (rules.ts `ReviewCounts`). */
async function reviews(ctx: FleetContext, since: number): Promise<Map<string, ReviewCounts>> {
  const rows = await ctx.db
    .selectFrom("events")
    .select(["unit_id", "data"])
    .where("kind", "=", "session")
    .where("at", ">=", since)
    .where("data", "like", '%"review":true%')
    .limit(10_000)
    .execute();
  const out = new Map<string, ReviewCounts>();
  for (const r of rows) {
    const c = out.get(r.unit_id) ?? { noOutcome: 0, conflict: 0 };
    if (noOutcome(r.data)) c.noOutcome++;
    else c.conflict++;
    out.set(r.unit_id, c);
  }
  return out;
}

async function recon(ctx: FleetContext): Promise<Snapshot["recon"]> {
  const run = await ctx.db
    .selectFrom("recon_runs")
    .select(["id", "from_day", "to_day"])
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  if (run === undefined) return null;
  const rows = await ctx.db
    .selectFrom("recon_lines")
    .select((eb) => ["unit_id", eb.fn.countAll<number>().as("n")])
    .where("run_id", "=", run.id)
    .where("class", "in", DIFFERENCES)
    .groupBy("unit_id")
    .execute();
  const differences = new Map<string, number>();
  for (const r of rows) {
    const k = r.unit_id ?? "*";
    differences.set(k, (differences.get(k) ?? 0) + Number(r.n));
  }
  return { runId: run.id, fromDay: run.from_day, toDay: run.to_day, differences };
}

async function rolledBack(ctx: FleetContext, since: number): Promise<Snapshot["rolledBack"]> {
  const rows = await ctx.db
    .selectFrom("rollouts")
    .select(["unit_id", "bundle_id", "state", "reason", "updated_at"])
    .where("updated_at", ">=", since)
    .orderBy("updated_at", "desc")
    .execute();
  const out = new Map<string, { bundleId: string; reason: string }>();
  const decided = new Set<string>();
  for (const r of rows) {
    if (decided.has(r.unit_id) || r.state === "pending") continue;
    decided.add(r.unit_id); // the newest decided rollout of the unit
    if (r.state === "rolledBack") out.set(r.unit_id, { bundleId: r.bundle_id, reason: r.reason });
  }
  return out;
}

/** The snapshot the rules read at `now`, skipping what switched-off rules would need. */
export async function readSnapshot(
  ctx: FleetContext,
  rules: AlertRules,
  now: number,
  startedAt: number,
  openOffline: ReadonlySet<string> = new Set(),
): Promise<Snapshot> {
  const none = new Map<string, never>();
  const weeksAgo: Map<string, number>[] = [];
  let salesNow: Map<string, number> = new Map();
  if (rules.silent !== false) {
    const w = rules.silent.windowMinutes * MIN;
    salesNow = await salesIn(ctx, now - w, now + 1);
    for (let k = 1; k <= rules.silent.weeks; k++)
      weeksAgo.push(await salesIn(ctx, now - k * WEEK - w, now - k * WEEK));
  }
  const latestList =
    rules.entitlements === false
      ? undefined
      : await ctx.db
          .selectFrom("plan_entitlements")
          .select("valid_until")
          .orderBy("serial", "desc")
          .limit(1)
          .executeTakeFirst();
  return {
    now,
    startedAt,
    openOffline,
    units: await units(ctx),
    salesNow,
    salesWeeksAgo: weeksAgo,
    vends:
      rules.vendFailures === false
        ? none
        : await vends(ctx, now - rules.vendFailures.lookbackHours * 60 * MIN, rules.vendFailures.lastVends),
    review: rules.review === false ? none : await reviews(ctx, now - rules.review.hours * 60 * MIN),
    recon: rules.reconciliation === false ? null : await recon(ctx),
    entitlementsValidUntil: latestList === undefined ? null : Number(latestList.valid_until),
    rolledBack: rules.rollout === false ? none : await rolledBack(ctx, now - rules.rollout.hours * 60 * MIN),
  };
}
