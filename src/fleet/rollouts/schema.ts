/**
 * The rollout tables (issue 41), created by `0010_rollouts` (./migration.ts). A rollout is one uploaded
 * bundle (at most one rollout per bundle: `rollout_plans.bundle_id` is its key) sent to its units in phases;
 * each unit's progress is its row in the bundles feature's `rollouts` table, whose `phase` column this
 * migration adds (null: a unit that fetched a bundle without a rollout, as before).
 *
 * - `rollout_plans`: the rollout's state (`running`, `paused`, `halted`, `aborted`, `done`), the phase now
 *   released (`current_phase`: 0 the canary, 1.. the waves; a unit's row is offered when its phase is at
 *   most this, or -1: "update this unit now"), the failure threshold, who made it and why it stopped.
 * - `rollout_steps`: each step a unit reported (fetched ... committed, refused, rolledBack), once per
 *   (bundle, unit, step): a step reported twice is stored once.
 */
export type RolloutPlanState = "running" | "paused" | "halted" | "aborted" | "done";

export interface RolloutPlansTable {
  bundle_id: string;
  state: RolloutPlanState;
  current_phase: number;
  phases: number;
  /** Percentage of a phase's units that may fail (refused or rolled back) before the rollout halts. */
  max_failure_pct: number;
  /** The targets as given (JSON: { all, groups, units }) and the phase sizes as given (JSON), for status. */
  targets: string;
  sizes: string;
  reason: string;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface RolloutStepsTable {
  bundle_id: string;
  unit_id: string;
  step: string;
  reason: string;
  at: number;
  received_at: number;
}

declare module "../db/schema.js" {
  interface FleetDatabase {
    rollout_plans: RolloutPlansTable;
    rollout_steps: RolloutStepsTable;
  }
}
