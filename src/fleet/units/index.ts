/**
 * Units, as the dashboard reaches them: the overview, the units list and one unit's page (with their JSON),
 * and a manager's enrolment decisions (approve, revoke). The unit API itself is routes.ts, mounted by
 * server.ts.
 */
import type { FleetFeature } from "../feature.js";
import { mountUnitPages } from "./pages.js";

export { type UnitDetail, type UnitEventRow, unitDetail, type Vend } from "./detailStore.js";
export { type Overview, overview } from "./overviewStore.js";
export {
  approveUnit,
  BACKLOG_AGE_ALERT_MS,
  BACKLOG_EVENTS_ALERT,
  type DecisionResult,
  HEARTBEAT_INTERVAL_MS,
  listUnits,
  OFFLINE_AFTER_MS,
  revokeUnit,
  type UnitStatus,
  type UnitSummary,
} from "./store.js";
export { configShown, releaseShown } from "./versions.js";

export const unitsFeature: FleetFeature = {
  name: "units",
  pages: (web, ctx, t) => mountUnitPages(web, ctx, t),
};
