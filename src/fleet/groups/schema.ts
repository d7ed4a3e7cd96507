/**
 * The groups table (issue 41), created by `0009_unit_groups` (./migration.ts): a unit carries any number of
 * groups (labels) that bundles' rollouts and per-group values target. Other features read it through
 * this feature's index (groupNamesOfUnit, unitIdsInGroups).
 */
export interface UnitGroupsTable {
  unit_id: string;
  group_name: string;
}

declare module "../db/schema.js" {
  interface FleetDatabase {
    unit_groups: UnitGroupsTable;
  }
}
