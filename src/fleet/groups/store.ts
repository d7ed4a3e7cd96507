/** Unit groups (issue 41): who carries which label. Other features read it through index.ts. */
import type { Kysely } from "kysely";
import type { FleetDatabase } from "../db/schema.js";
import "./schema.js";

/** The groups a unit carries, sorted. */
export async function groupNamesOfUnit(db: Kysely<FleetDatabase>, unitId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("unit_groups")
    .select("group_name")
    .where("unit_id", "=", unitId)
    .orderBy("group_name")
    .execute();
  return rows.map((r) => r.group_name);
}

/** The units carrying any of `names`, sorted, each once. */
export async function unitIdsInGroups(
  db: Kysely<FleetDatabase>,
  names: readonly string[],
): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom("unit_groups")
    .select("unit_id")
    .distinct()
    .where("group_name", "in", [...names])
    .orderBy("unit_id")
    .execute();
  return rows.map((r) => r.unit_id);
}

/** Adds units to a group; returns how many were added (those already in it are left as they are). */
export async function addToGroup(
  db: Kysely<FleetDatabase>,
  name: string,
  unitIds: readonly string[],
): Promise<number> {
  let added = 0;
  for (const unitId of unitIds) {
    const r = await db
      .insertInto("unit_groups")
      .values({ unit_id: unitId, group_name: name })
      .onConflict((oc) => oc.columns(["unit_id", "group_name"]).doNothing())
      .executeTakeFirst();
    added += Number(r.numInsertedOrUpdatedRows ?? 0n);
  }
  return added;
}

/** Removes units from a group; returns how many were removed. */
export async function removeFromGroup(
  db: Kysely<FleetDatabase>,
  name: string,
  unitIds: readonly string[],
): Promise<number> {
  if (unitIds.length === 0) return 0;
  const r = await db
    .deleteFrom("unit_groups")
    .where("group_name", "=", name)
    .where("unit_id", "in", [...unitIds])
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Every group with its units, by name. */
export async function listGroups(db: Kysely<FleetDatabase>): Promise<{ name: string; units: string[] }[]> {
  const rows = await db
    .selectFrom("unit_groups")
    .select(["group_name", "unit_id"])
    .orderBy("group_name")
    .orderBy("unit_id")
    .execute();
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.group_name, [...(out.get(r.group_name) ?? []), r.unit_id]);
  return [...out].map(([name, units]) => ({ name, units }));
}

/** Which of `unitIds` are not enrolled units of this fleet. */
export async function unknownUnits(db: Kysely<FleetDatabase>, unitIds: readonly string[]): Promise<string[]> {
  if (unitIds.length === 0) return [];
  const known = new Set(
    (
      await db
        .selectFrom("units")
        .select("id")
        .where("id", "in", [...unitIds])
        .execute()
    ).map((r) => r.id),
  );
  return unitIds.filter((u) => !known.has(u));
}

/** Renames a group (every unit in it); returns how many units it holds. Refused by the caller when `to` exists. */
export async function renameGroup(db: Kysely<FleetDatabase>, from: string, to: string): Promise<number> {
  const r = await db
    .updateTable("unit_groups")
    .set({ group_name: to })
    .where("group_name", "=", from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Deletes a group (takes every unit out of it); returns how many units it held. */
export async function deleteGroup(db: Kysely<FleetDatabase>, name: string): Promise<number> {
  const r = await db.deleteFrom("unit_groups").where("group_name", "=", name).executeTakeFirst();
  return Number(r.numDeletedRows);
}
