/**
 * Config values the fleet holds per group and per unit (issue 41): the `group:<name>` and `unit` layers of
 * a unit's config (src/config/layers.ts). Managers set them with `vendd fleet values` or on the dashboard
 * (a group's page, a unit's values page); the unit API (units/routes.ts) advertises each unit's ETag in the
 * heartbeat answer and serves `GET /values`, the unit's document signed for it alone with the values key.
 * The table is `fleet_values` (migration `0012_fleet_values`).
 */
import type { FleetFeature } from "../feature.js";
import { mountValuePages } from "./routes.js";

export { deleteFleetGroup, renameFleetGroup, setFleetValue, unsetFleetValue } from "./actions.js";
export { ValueRefused, type ValueScope } from "./rules.js";
export { type HeldValue, listValues, valuesDocumentOf, valuesEtagOf } from "./store.js";

export const valuesFeature: FleetFeature = {
  name: "values",
  pages: (web, ctx, t) => mountValuePages(web, ctx, t),
};
