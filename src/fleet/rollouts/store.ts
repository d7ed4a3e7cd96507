/**
 * Rollouts (issue 41) in the database: made, stepped, paused, resumed, aborted, one unit updated now, and
 * read. Every change is one transaction that locks the rollout's plan row first (PostgreSQL: FOR UPDATE;
 * SQLite: one writer at a time), so two fleet processes never both release a phase, and a process killed
 * mid-change leaves the change whole or not at all. What a unit is offered is read from these rows at each
 * request (rolloutGate): a halted, paused or aborted rollout offers nothing, whichever process answers.
 */
import type { Kysely, Transaction } from "kysely";
import type { BundleStep, StepReport } from "../../core/fleetWire.js";
import { targetsUnit } from "../bundles/index.js";
import type { FleetContext } from "../context.js";
import type { FleetDatabase } from "../db/schema.js";
import { unitIdsInGroups } from "../groups/index.js";
import type { RolloutStatus, RolloutUnit } from "./rows.js";
import { assignPhases, isFailed, movesForward, nextMove, type PhaseSize, stateOfStep } from "./rules.js";
import type { RolloutPlanState } from "./schema.js";

export type { RolloutStatus, RolloutUnit };

import "./schema.js";

export class RolloutError extends Error {
  override readonly name = "RolloutError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface RolloutTargets {
  all: boolean;
  groups: string[];
  units: string[];
}

export interface CreateRollout {
  bundleId: string;
  targets: RolloutTargets;
  canary: PhaseSize;
  wave: PhaseSize;
  maxFailurePct: number;
  by: string;
}

type Db = Kysely<FleetDatabase> | Transaction<FleetDatabase>;

async function lockPlan(ctx: FleetContext, trx: Db, bundleId: string) {
  let q = trx.selectFrom("rollout_plans").selectAll().where("bundle_id", "=", bundleId);
  if (ctx.dialect === "postgres") q = q.forUpdate();
  return q.executeTakeFirst();
}

async function fleetNamesOf(trx: Db, unitIds: readonly string[]): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  if (unitIds.length === 0) return out;
  const rows = await trx
    .selectFrom("units")
    .select(["id", "last_heartbeat"])
    .where("id", "in", [...unitIds])
    .execute();
  for (const r of rows) {
    let fleet: string | null = null;
    try {
      const v: unknown = r.last_heartbeat === null ? null : JSON.parse(r.last_heartbeat);
      if (typeof v === "object" && v !== null && "fleet" in v && typeof v.fleet === "string") fleet = v.fleet;
    } catch {
      fleet = null;
    }
    out.set(r.id, fleet);
  }
  return out;
}

/**
 * Makes a rollout of a stored bundle, in the caller's transaction when given one (`vendd fleet rollout
 * create --bundle FILE` stores the bundle and makes its rollout in one, so no unit sees it before): the
 * approved units the targets name and the bundle's own targets reach, sorted, the canary first, then waves.
 */
export async function createRollout(ctx: FleetContext, c: CreateRollout, trx?: Transaction<FleetDatabase>) {
  const run = async (t: Transaction<FleetDatabase>) => {
    const bundle = await t
      .selectFrom("bundles")
      .select(["id", "targets"])
      .where("id", "=", c.bundleId)
      .executeTakeFirst();
    if (bundle === undefined)
      throw new RolloutError("no_bundle", `no bundle ${c.bundleId} is stored: upload it first`);
    if ((await lockPlan(ctx, t, c.bundleId)) !== undefined)
      throw new RolloutError(
        "exists",
        `bundle ${c.bundleId} already has a rollout: see vendd fleet rollout status ${c.bundleId}`,
      );
    const offered = await t
      .selectFrom("rollouts")
      .select("unit_id")
      .where("bundle_id", "=", c.bundleId)
      .executeTakeFirst();
    if (offered !== undefined)
      throw new RolloutError(
        "already_offered",
        `bundle ${c.bundleId} was uploaded without a rollout and units have fetched it already: make a new bundle (a higher version) and create its rollout with --bundle FILE`,
      );
    let q = t.selectFrom("units").select("id").where("status", "=", "approved");
    if (!c.targets.all) {
      const ids = new Set([...c.targets.units, ...(await unitIdsInGroups(t, c.targets.groups))]);
      if (ids.size === 0) throw new RolloutError("no_units", "the targets name no unit");
      q = q.where("id", "in", [...ids]);
    }
    const candidates = (await q.orderBy("id").execute()).map((r) => r.id);
    const fleets = await fleetNamesOf(t, candidates);
    const units = candidates.filter((u) => targetsUnit(bundle.targets, u, fleets.get(u) ?? null));
    if (units.length === 0)
      throw new RolloutError(
        "no_units",
        "no approved unit is both in the targets and targeted by the bundle itself (its --targets: unit ids or the units' updates.fleet)",
      );
    const { phaseOf, phases } = assignPhases(units, c.canary, c.wave);
    const now = ctx.clock.now();
    await t
      .insertInto("rollout_plans")
      .values({
        bundle_id: c.bundleId,
        state: "running",
        current_phase: 0,
        phases,
        max_failure_pct: c.maxFailurePct,
        targets: JSON.stringify(c.targets),
        sizes: JSON.stringify({ canary: c.canary, wave: c.wave }),
        reason: "",
        created_by: c.by,
        created_at: now,
        updated_at: now,
      })
      .execute();
    for (const [unitId, phase] of phaseOf)
      await t
        .insertInto("rollouts")
        .values({
          bundle_id: c.bundleId,
          unit_id: unitId,
          state: phase === 0 ? "offered" : "waiting",
          reason: "",
          updated_at: now,
          phase,
        })
        .execute();
    return { bundleId: c.bundleId, units: units.length, phases };
  };
  return trx === undefined ? ctx.db.transaction().execute(run) : run(trx);
}

/**
 * For the unit API (heartbeat hint, GET /bundle): each bundle that has a rollout, and whether this unit may
 * take it now: its row's phase is released and the rollout is running or done, or the manager asked to
 * update it now and the rollout is not halted or aborted. Bundles without a rollout are not in the map.
 */
export async function rolloutGate(ctx: FleetContext, unitId: string): Promise<Map<string, boolean>> {
  const rows = await ctx.db
    .selectFrom("rollout_plans as p")
    .leftJoin("rollouts as r", (j) => j.onRef("r.bundle_id", "=", "p.bundle_id").on("r.unit_id", "=", unitId))
    .select(["p.bundle_id", "p.state", "p.current_phase", "r.phase"])
    .execute();
  const out = new Map<string, boolean>();
  for (const r of rows) out.set(r.bundle_id, offers(r.state, Number(r.current_phase), r.phase));
  return out;
}

function offers(state: RolloutPlanState, current: number, phase: number | null): boolean {
  if (phase === null) return false;
  if (phase === -1) return state === "running" || state === "paused" || state === "done";
  return (state === "running" || state === "done") && phase <= current;
}

/**
 * A unit's step (POST /steps): stored once per (bundle, unit, step); moves the unit's state forward; then
 * the rollout's next move (halt, next phase, done), all in one transaction. `stored` false: no such bundle
 * on this fleet, or the step was stored before.
 */
export async function recordStep(ctx: FleetContext, r: StepReport): Promise<{ stored: boolean }> {
  return ctx.db.transaction().execute(async (t) => {
    const bundle = await t
      .selectFrom("bundles")
      .select("id")
      .where("sha256", "=", r.sha256)
      .executeTakeFirst();
    if (bundle === undefined) return { stored: false };
    const plan = await lockPlan(ctx, t, bundle.id);
    const now = ctx.clock.now();
    const ins = await t
      .insertInto("rollout_steps")
      .values({
        bundle_id: bundle.id,
        unit_id: r.unitId,
        step: r.step,
        reason: r.reason,
        at: r.at,
        received_at: now,
      })
      .onConflict((oc) => oc.columns(["bundle_id", "unit_id", "step"]).doNothing())
      .executeTakeFirst();
    if (Number(ins.numInsertedOrUpdatedRows ?? 0n) === 0) return { stored: false };
    const to = stateOfStep(r.step);
    const row = await t
      .selectFrom("rollouts")
      .select(["state"])
      .where("bundle_id", "=", bundle.id)
      .where("unit_id", "=", r.unitId)
      .executeTakeFirst();
    if (row === undefined)
      await t
        .insertInto("rollouts")
        .values({
          bundle_id: bundle.id,
          unit_id: r.unitId,
          state: to,
          reason: r.reason,
          updated_at: now,
          phase: null,
        })
        .execute();
    else if (movesForward(row.state, to))
      await t
        .updateTable("rollouts")
        .set({ state: to, reason: r.reason, updated_at: now })
        .where("bundle_id", "=", bundle.id)
        .where("unit_id", "=", r.unitId)
        .execute();
    if (plan !== undefined && plan.state === "running")
      await advance(
        ctx,
        t,
        bundle.id,
        Number(plan.current_phase),
        Number(plan.phases),
        Number(plan.max_failure_pct),
      );
    return { stored: true };
  });
}

/** The running rollout's next move after a change in its current phase (the plan row locked by the caller). */
async function advance(
  ctx: FleetContext,
  t: Transaction<FleetDatabase>,
  bundleId: string,
  current: number,
  phases: number,
  maxFailurePct: number,
): Promise<void> {
  for (let phase = current; phase < phases; phase++) {
    const states = (
      await t
        .selectFrom("rollouts")
        .select("state")
        .where("bundle_id", "=", bundleId)
        .where("phase", "=", phase)
        .execute()
    ).map((r) => r.state);
    const move = nextMove(states, maxFailurePct, phase === phases - 1);
    const now = ctx.clock.now();
    if (move.kind === "halt") {
      await t
        .updateTable("rollout_plans")
        .set({ state: "halted", reason: `phase ${phase}: ${move.reason}`, updated_at: now })
        .where("bundle_id", "=", bundleId)
        .execute();
      return;
    }
    if (move.kind === "wait") {
      if (phase !== current)
        await t
          .updateTable("rollout_plans")
          .set({ current_phase: phase, updated_at: now })
          .where("bundle_id", "=", bundleId)
          .execute();
      return;
    }
    if (move.kind === "done") {
      await t
        .updateTable("rollout_plans")
        .set({ state: "done", current_phase: phase, updated_at: now })
        .where("bundle_id", "=", bundleId)
        .execute();
      return;
    }
    // advance: release the next phase.
    await t
      .updateTable("rollouts")
      .set({ state: "offered", updated_at: now })
      .where("bundle_id", "=", bundleId)
      .where("phase", "=", phase + 1)
      .where("state", "=", "waiting")
      .execute();
    await t
      .updateTable("rollout_plans")
      .set({ current_phase: phase + 1, updated_at: now })
      .where("bundle_id", "=", bundleId)
      .execute();
  }
}

export type RolloutAction = "pause" | "resume" | "abort";

/**
 * A manager's pause (running → paused), resume (paused → running; halted stays halted: make a new bundle),
 * or abort (running, paused or halted → aborted: no unit is offered it again; units that applied it keep it).
 */
export async function changeRollout(
  ctx: FleetContext,
  bundleId: string,
  action: RolloutAction,
  by: string,
): Promise<RolloutPlanState> {
  return ctx.db.transaction().execute(async (t) => {
    const plan = await lockPlan(ctx, t, bundleId);
    if (plan === undefined) throw new RolloutError("no_rollout", `bundle ${bundleId} has no rollout`);
    const from = plan.state;
    const to: RolloutPlanState | null =
      action === "pause"
        ? from === "running"
          ? "paused"
          : null
        : action === "resume"
          ? from === "paused"
            ? "running"
            : null
          : from === "running" || from === "paused" || from === "halted"
            ? "aborted"
            : null;
    if (to === null)
      throw new RolloutError(
        "state",
        `the rollout of ${bundleId} is ${from}: it cannot be ${action === "abort" ? "aborted" : `${action}d`}${from === "halted" && action === "resume" ? " (a halted rollout stays halted: abort it and roll out a fixed bundle)" : ""}`,
      );
    const now = ctx.clock.now();
    const reason =
      action === "resume"
        ? ""
        : `${action === "pause" ? "paused" : "aborted"} by ${by}${from === "halted" ? ` (${plan.reason})` : ""}`;
    await t
      .updateTable("rollout_plans")
      .set({ state: to, reason, updated_at: now })
      .where("bundle_id", "=", bundleId)
      .execute();
    if (to === "running")
      await advance(
        ctx,
        t,
        bundleId,
        Number(plan.current_phase),
        Number(plan.phases),
        Number(plan.max_failure_pct),
      );
    return (await lockPlan(ctx, t, bundleId))?.state ?? to;
  });
}

/** "Update this unit now": the unit is offered the bundle at its next heartbeat, whatever its phase. */
export async function updateUnitNow(ctx: FleetContext, bundleId: string, unitId: string): Promise<void> {
  await ctx.db.transaction().execute(async (t) => {
    const plan = await lockPlan(ctx, t, bundleId);
    if (plan === undefined) throw new RolloutError("no_rollout", `bundle ${bundleId} has no rollout`);
    if (plan.state === "halted" || plan.state === "aborted")
      throw new RolloutError("state", `the rollout of ${bundleId} is ${plan.state}: no unit takes it`);
    const bundle = await t
      .selectFrom("bundles")
      .select("targets")
      .where("id", "=", bundleId)
      .executeTakeFirstOrThrow();
    const unit = await t
      .selectFrom("units")
      .select(["id", "status"])
      .where("id", "=", unitId)
      .executeTakeFirst();
    if (unit === undefined || unit.status !== "approved")
      throw new RolloutError("no_unit", `no approved unit ${unitId} is enrolled`);
    const fleet = (await fleetNamesOf(t, [unitId])).get(unitId) ?? null;
    if (!targetsUnit(bundle.targets, unitId, fleet))
      throw new RolloutError(
        "not_targeted",
        `bundle ${bundleId} does not target ${unitId} (its --targets): the unit would refuse it`,
      );
    const now = ctx.clock.now();
    const row = await t
      .selectFrom("rollouts")
      .select("state")
      .where("bundle_id", "=", bundleId)
      .where("unit_id", "=", unitId)
      .executeTakeFirst();
    if (row === undefined)
      await t
        .insertInto("rollouts")
        .values({
          bundle_id: bundleId,
          unit_id: unitId,
          state: "offered",
          reason: "",
          updated_at: now,
          phase: -1,
        })
        .execute();
    else if (row.state === "waiting" || row.state === "offered")
      await t
        .updateTable("rollouts")
        .set({ state: "offered", phase: -1, updated_at: now })
        .where("bundle_id", "=", bundleId)
        .where("unit_id", "=", unitId)
        .execute();
  });
}

/** One rollout with its units (sorted by phase, then unit), or null. */
export async function rolloutStatus(ctx: FleetContext, bundleId: string): Promise<RolloutStatus | null> {
  const p = await ctx.db
    .selectFrom("rollout_plans as p")
    .innerJoin("bundles as b", "b.id", "p.bundle_id")
    .select([
      "p.bundle_id",
      "p.state",
      "p.reason",
      "p.current_phase",
      "p.phases",
      "p.max_failure_pct",
      "p.created_by",
      "p.created_at",
      "p.updated_at",
      "b.kind",
      "b.version",
    ])
    .where("p.bundle_id", "=", bundleId)
    .executeTakeFirst();
  if (p === undefined) return null;
  const units = await ctx.db
    .selectFrom("rollouts")
    .select(["unit_id", "phase", "state", "reason", "updated_at"])
    .where("bundle_id", "=", bundleId)
    .orderBy("phase")
    .orderBy("unit_id")
    .execute();
  return {
    bundleId: p.bundle_id,
    kind: p.kind,
    version: p.version,
    state: p.state,
    reason: p.reason,
    currentPhase: Number(p.current_phase),
    phases: Number(p.phases),
    maxFailurePct: Number(p.max_failure_pct),
    createdBy: p.created_by,
    createdAt: Number(p.created_at),
    updatedAt: Number(p.updated_at),
    units: units.map((u) => ({
      unitId: u.unit_id,
      phase: u.phase === null ? null : Number(u.phase),
      state: u.state,
      reason: u.reason,
      updatedAt: Number(u.updated_at),
    })),
  };
}

/** Every rollout, newest first (their units' counts come with rolloutStatus). */
export async function listRollouts(
  ctx: FleetContext,
): Promise<
  { bundleId: string; state: RolloutPlanState; failed: number; units: number; createdAt: number }[]
> {
  const plans = await ctx.db
    .selectFrom("rollout_plans")
    .select(["bundle_id", "state", "created_at"])
    .orderBy("created_at", "desc")
    .execute();
  const out = [];
  for (const p of plans) {
    const rows = await ctx.db
      .selectFrom("rollouts")
      .select("state")
      .where("bundle_id", "=", p.bundle_id)
      .execute();
    out.push({
      bundleId: p.bundle_id,
      state: p.state,
      failed: rows.filter((r) => isFailed(r.state)).length,
      units: rows.length,
      createdAt: Number(p.created_at),
    });
  }
  return out;
}

export type { BundleStep };
