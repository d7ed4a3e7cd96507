/**
 * Unit groups (issue 41): labels on units that rollouts (src/fleet/rollouts) and per-group values target.
 * The table is `unit_groups` (migration `0009_unit_groups`); names follow rules.ts's GROUP_NAME.
 */
import type { FleetFeature } from "../feature.js";
import { mountGroupPages } from "./routes.js";

export { GROUP_NAME, GROUP_NAME_RULE, groupNameProblem } from "./rules.js";
export {
  addToGroup,
  deleteGroup,
  groupNamesOfUnit,
  listGroups,
  removeFromGroup,
  renameGroup,
  unitIdsInGroups,
  unknownUnits,
} from "./store.js";

export const groupsFeature: FleetFeature = {
  name: "groups",
  pages: (web, ctx, t) => mountGroupPages(web, ctx, t),
  nav: [["/groups", "Groups"]],
};
