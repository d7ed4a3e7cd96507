/**
 * Config values the fleet holds per group and per unit (issue 41), and the one document each unit gets:
 * its groups' values (in its group order, by name) and its own. Other features read it through index.ts.
 */
import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { NO_VALUES_ETAG, type UnitValuesDocument } from "../../config/fleetValues.js";
import type { FleetDatabase } from "../db/schema.js";
import { deleteGroup, groupNamesOfUnit, renameGroup } from "../groups/index.js";
import type { HeldValue } from "./rows.js";
import type { ValueScope } from "./rules.js";
import "./schema.js";

export type { HeldValue } from "./rows.js";

/** Sets (or replaces) a value; the caller checked key, value and target (rules.ts). */
export async function setValue(
  db: Kysely<FleetDatabase>,
  v: { scope: ValueScope; target: string; key: string; value: unknown; by: string; at: number },
): Promise<void> {
  const row = {
    scope: v.scope,
    target: v.target,
    key: v.key,
    value: JSON.stringify(v.value),
    updated_at: v.at,
    updated_by: v.by,
  };
  await db
    .insertInto("fleet_values")
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(["scope", "target", "key"])
        .doUpdateSet({ value: row.value, updated_at: row.updated_at, updated_by: row.updated_by }),
    )
    .execute();
}

/** Removes a value; whether there was one. */
export async function unsetValue(
  db: Kysely<FleetDatabase>,
  scope: ValueScope,
  target: string,
  key: string,
): Promise<boolean> {
  const r = await db
    .deleteFrom("fleet_values")
    .where("scope", "=", scope)
    .where("target", "=", target)
    .where("key", "=", key)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The values held, by scope, target and key; only one scope or target when given. */
export async function listValues(
  db: Kysely<FleetDatabase>,
  filter: { scope?: ValueScope; target?: string } = {},
): Promise<HeldValue[]> {
  let q = db.selectFrom("fleet_values").selectAll();
  if (filter.scope !== undefined) q = q.where("scope", "=", filter.scope);
  if (filter.target !== undefined) q = q.where("target", "=", filter.target);
  const rows = await q.orderBy("scope").orderBy("target").orderBy("key").execute();
  return rows.map((r) => ({
    scope: r.scope,
    target: r.target,
    key: r.key,
    value: JSON.parse(r.value) as unknown,
    updatedAt: Number(r.updated_at),
    updatedBy: r.updated_by,
  }));
}

/** The rows that make up one unit's values: its own and its groups', in one query. */
async function rowsOfUnit(db: Kysely<FleetDatabase>, unitId: string) {
  return db
    .selectFrom("fleet_values")
    .select(["scope", "target", "key", "value"])
    .where((eb) =>
      eb.or([
        eb.and([eb("scope", "=", "unit"), eb("target", "=", unitId)]),
        eb.and([
          eb("scope", "=", "group"),
          eb("target", "in", eb.selectFrom("unit_groups").select("group_name").where("unit_id", "=", unitId)),
        ]),
      ]),
    )
    .orderBy("scope")
    .orderBy("target")
    .orderBy("key")
    .execute();
}

/**
 * The ETag of a unit's values (the heartbeat's `valuesEtag`): a hash of its own and its groups' values, so
 * it changes with a value, with a group joined or left, and with a group renamed. One query.
 */
export async function valuesEtagOf(db: Kysely<FleetDatabase>, unitId: string): Promise<string> {
  const rows = await rowsOfUnit(db, unitId);
  if (rows.length === 0) return NO_VALUES_ETAG;
  const hash = createHash("sha256");
  for (const r of rows) hash.update(JSON.stringify([r.scope, r.target, r.key, r.value])).update("\n");
  return `"v-${hash.digest("hex").slice(0, 32)}"`;
}

/** The (unsigned) document of `unitId`'s values at `now`, and its ETag. */
export async function valuesDocumentOf(
  db: Kysely<FleetDatabase>,
  unitId: string,
  now: number,
): Promise<{ document: UnitValuesDocument; etag: string }> {
  const rows = await rowsOfUnit(db, unitId);
  const etag = await valuesEtagOf(db, unitId);
  const groups = new Map<string, Record<string, unknown>>();
  for (const name of await groupNamesOfUnit(db, unitId)) groups.set(name, {});
  const unit: Record<string, unknown> = {};
  for (const r of rows) {
    const value = JSON.parse(r.value) as unknown;
    if (r.scope === "unit") unit[r.key] = value;
    else {
      const g = groups.get(r.target);
      if (g !== undefined) g[r.key] = value;
    }
  }
  return {
    document: {
      version: 1,
      unitId,
      issuedAt: now,
      groups: [...groups]
        .filter(([, values]) => Object.keys(values).length > 0)
        .map(([name, values]) => ({ name, values })),
      unit,
    },
    etag,
  };
}

/** A group renamed: its values follow it (in the caller's transaction with the membership's rename). */
export async function renameValueTarget(db: Kysely<FleetDatabase>, from: string, to: string): Promise<void> {
  await db
    .updateTable("fleet_values")
    .set({ target: to })
    .where("scope", "=", "group")
    .where("target", "=", from)
    .execute();
}

/** A group deleted: its values go with it. */
export async function dropGroupValues(db: Kysely<FleetDatabase>, name: string): Promise<number> {
  const r = await db
    .deleteFrom("fleet_values")
    .where("scope", "=", "group")
    .where("target", "=", name)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Renames a group and its values in one transaction; returns how many units it holds. */
export async function renameGroupAndValues(
  db: Kysely<FleetDatabase>,
  from: string,
  to: string,
): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const n = await renameGroup(tx, from, to);
    await renameValueTarget(tx, from, to);
    return n;
  });
}

/** Deletes a group and its values in one transaction; returns how many units it held. */
export async function deleteGroupAndValues(db: Kysely<FleetDatabase>, name: string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const n = await deleteGroup(tx, name);
    await dropGroupValues(tx, name);
    return n;
  });
}
