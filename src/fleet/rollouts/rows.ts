/** The shapes of a rollout the pages and the CLI read (store.ts reads them, views.ts renders them). */
import type { UnitRolloutState } from "./rules.js";
import type { RolloutPlanState } from "./schema.js";

export interface RolloutUnit {
  unitId: string;
  phase: number | null;
  state: UnitRolloutState;
  reason: string;
  updatedAt: number;
}

export interface RolloutStatus {
  bundleId: string;
  kind: string;
  version: string;
  state: RolloutPlanState;
  reason: string;
  currentPhase: number;
  phases: number;
  maxFailurePct: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  units: RolloutUnit[];
}
