/** The groups feature's table, created by migration `0009_unit_groups` (issue 41). */
import type { Kysely } from "kysely";

/** Migration `0009_unit_groups`: which groups (labels) each unit carries. */
export async function unitGroupsTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("unit_groups")
    .addColumn("unit_id", "text", (c) => c.notNull())
    .addColumn("group_name", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("unit_groups_pk", ["unit_id", "group_name"])
    .execute();
  await db.schema.createIndex("unit_groups_by_group").on("unit_groups").column("group_name").execute();
}
