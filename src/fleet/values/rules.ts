/**
 * What a fleet-held value may be (issue 41): a key of the unit config that is not an identity key (nor a
 * mapping holding one, nor a key inside one), with a value the key's own schema accepts. The value is read
 * from text as the console's `config set` reads it (src/config/configValue.ts): by the key's type.
 */
import { keyValueProblem, readEditValue } from "../../config/configValue.js";
import { identityKeyProblem, VALUE_KEY } from "../../config/fleetValues.js";
import { printable } from "../../core/printable.js";
import { groupNameProblem } from "../groups/index.js";

/** A refused value: the message names the key (or target) and what to do instead. */
export class ValueRefused extends Error {}

export type ValueScope = "unit" | "group";

/** Checks a key; throws {@link ValueRefused} naming it. */
export function checkValueKey(key: string): void {
  if (!VALUE_KEY.test(key))
    throw new ValueRefused(
      `${printable(key, 80)} is not a config key (dotted, like display.idleText); nothing changed`,
    );
  const identity = identityKeyProblem(key);
  if (identity !== null) throw new ValueRefused(`${identity}; nothing changed`);
}

/** Reads `text` as the value of `key` and checks it by the key's schema; throws {@link ValueRefused}. */
export function readValue(key: string, text: string): unknown {
  checkValueKey(key);
  if (text.length > 4096) throw new ValueRefused(`${key}: the value is longer than 4096 characters`);
  const v = readEditValue(key, text);
  if (typeof v === "string") throw new ValueRefused(`${v}; nothing changed`);
  if ("remove" in v)
    throw new ValueRefused(`${key} cannot be null: unset it instead (back to the layers under it)`);
  const problem = keyValueProblem(key, v.value);
  if (problem !== null) throw new ValueRefused(`${problem}; nothing changed`);
  return v.value;
}

/** Checks a target's name for its scope (a group name's rule; a unit id as the wire allows). */
export function checkTarget(scope: ValueScope, target: string): void {
  if (scope === "group") {
    const problem = groupNameProblem(target);
    if (problem !== null) throw new ValueRefused(`${problem}; nothing changed`);
  } else if (!/^[A-Za-z0-9._:-]{1,64}$/.test(target))
    throw new ValueRefused(`${printable(target, 70)} is not a unit id; nothing changed`);
}
