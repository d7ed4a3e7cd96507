/**
 * The managers' changes to fleet-held values and groups (issue 41), as the CLI (`vendd fleet values`,
 * `vendd fleet group`) and the dashboard make them: every input checked first (rules.ts), and a refusal
 * ({@link ValueRefused}) changes nothing.
 */
import { printable } from "../../core/printable.js";
import type { FleetContext } from "../context.js";
import { groupNameProblem, listGroups, unknownUnits } from "../groups/index.js";
import { checkTarget, checkValueKey, readValue, ValueRefused, type ValueScope } from "./rules.js";
import { deleteGroupAndValues, renameGroupAndValues, setValue, unsetValue } from "./store.js";

async function mustExist(ctx: FleetContext, scope: ValueScope, target: string): Promise<void> {
  checkTarget(scope, target);
  if (scope === "unit") {
    if ((await unknownUnits(ctx.db, [target])).length > 0)
      throw new ValueRefused(
        `no unit ${printable(target, 64)} is enrolled (vendd fleet units lists them); nothing changed`,
      );
  } else if (!(await listGroups(ctx.db)).some((g) => g.name === target))
    throw new ValueRefused(
      `no group ${target}: put units in it first (vendd fleet group add ${target} UNIT...); nothing changed`,
    );
}

/** Sets `key` to the value read from `text` for a unit or group; returns the value as stored. */
export async function setFleetValue(
  ctx: FleetContext,
  scope: ValueScope,
  target: string,
  key: string,
  text: string,
  by: string,
): Promise<unknown> {
  const value = readValue(key, text);
  await mustExist(ctx, scope, target);
  await setValue(ctx.db, { scope, target, key, value, by, at: ctx.clock.now() });
  ctx.logger.info({ scope, target, key, by }, "fleet value set");
  return value;
}

/** Removes `key` of a unit or group; whether there was one. */
export async function unsetFleetValue(
  ctx: FleetContext,
  scope: ValueScope,
  target: string,
  key: string,
  by: string,
): Promise<boolean> {
  checkValueKey(key);
  checkTarget(scope, target);
  const removed = await unsetValue(ctx.db, scope, target, key);
  if (removed) ctx.logger.info({ scope, target, key, by }, "fleet value unset");
  return removed;
}

/** Renames a group with its values; refused when `to` is taken or `from` does not exist. */
export async function renameFleetGroup(ctx: FleetContext, from: string, to: string): Promise<number> {
  const problem = groupNameProblem(to);
  if (problem !== null) throw new ValueRefused(`${problem}; nothing changed`);
  const groups = await listGroups(ctx.db);
  if (!groups.some((g) => g.name === from))
    throw new ValueRefused(`no group ${printable(from, 64)}; nothing changed`);
  if (groups.some((g) => g.name === to))
    throw new ValueRefused(`a group ${to} exists already; nothing changed`);
  return renameGroupAndValues(ctx.db, from, to);
}

/** Deletes a group (its units stay, out of it) with its values; how many units it held. */
export async function deleteFleetGroup(ctx: FleetContext, name: string): Promise<number> {
  const problem = groupNameProblem(name);
  if (problem !== null) throw new ValueRefused(`${problem}; nothing changed`);
  return deleteGroupAndValues(ctx.db, name);
}
