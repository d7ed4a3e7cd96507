/**
 * Rollouts (issue 41): one uploaded bundle sent to its units in phases (a canary, then waves), halted by
 * itself when a phase fails over its threshold, paused, resumed or aborted by a manager, one unit updated
 * now; each unit's steps as it reports them. The unit API reads rolloutGate and calls recordStep.
 */
import type { FleetFeature } from "../feature.js";
import { mountRolloutPages } from "./routes.js";

export { parsePhaseSize, SHOWN_STATES, shownState } from "./rules.js";
export {
  changeRollout,
  createRollout,
  listRollouts,
  type RolloutAction,
  RolloutError,
  type RolloutStatus,
  recordStep,
  rolloutGate,
  rolloutStatus,
  updateUnitNow,
} from "./store.js";

export const rolloutsFeature: FleetFeature = {
  name: "rollouts",
  pages: (web, ctx, t) => mountRolloutPages(web, ctx, t),
  nav: [["/rollouts", "Rollouts"]],
};
