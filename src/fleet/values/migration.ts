/** The values feature's table, created by migration `0012_fleet_values` (issue 41). */
import type { Kysely } from "kysely";

/** Migration `0012_fleet_values`: config values the fleet holds per group and per unit. */
export async function fleetValuesTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("fleet_values")
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("updated_by", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("fleet_values_pk", ["scope", "target", "key"])
    .execute();
}
