/**
 * The values table (issue 41), created by `0012_fleet_values` (./migration.ts): one row per (scope, target,
 * key). `scope` is `unit` (target: a unit id) or `group` (target: a group name); `value` is the value's JSON.
 */
export interface FleetValuesTable {
  scope: "unit" | "group";
  target: string;
  key: string;
  value: string;
  updated_at: number;
  updated_by: string;
}

declare module "../db/schema.js" {
  interface FleetDatabase {
    fleet_values: FleetValuesTable;
  }
}
