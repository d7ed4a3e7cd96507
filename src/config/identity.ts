/**
 * A unit's identity (issue 41): the keys that name this one unit, its point of sale and merchant, its key
 * and secrets files, its devices and its state paths. They live only on the unit, in its identity file
 * (`identity.yaml` next to the config file, `/etc/vendd/identity.yaml`), which no bundle and no fleet value touches.
 * A config bundle that would set or change one of them is refused on the unit (src/update/applyPolicy.ts),
 * and a fleet-held value may not set one (src/fleet/values, src/daemon/valuesFetch.ts). This list is the
 * one place that says which keys they are.
 */
import { dirname, join } from "node:path";
import { isRecord } from "./rules.js";

/** Every identity key, as a dotted config path. */
export const IDENTITY_KEYS = [
  "unit.id",
  "unit.name",
  "payment.v10.clientId",
  "payment.v10.merchantVat",
  "payment.v10.storeId",
  "payment.v10.merchantBrandId",
  "payment.v10.merchantLocationId",
  "payment.v10.merchantPosId",
  "payment.legacy.merchantId",
  "payment.legacy.locationId",
  "payment.legacy.posId",
  "payment.legacy.posUnitId",
  "secrets.file",
  "fleet.keyFile",
  "vmc.device",
  "display.device",
  "gpio.io.port",
  "dex.device",
  "dex.commId",
  "journal.path",
  "console.socket",
  "updates.stateDir",
  "updates.releaseRoot",
  "updates.inbox",
  "entitlements.listFile",
] as const;

export type IdentityKey = (typeof IDENTITY_KEYS)[number];

/** The identity file's name: it sits next to the config file (`/etc/vendd/identity.yaml`). */
export const IDENTITY_FILE_NAME = "identity.yaml";

/** The identity file that belongs to `configFile`. */
export function identityFileOf(configFile: string): string {
  return join(dirname(configFile), IDENTITY_FILE_NAME);
}

/** Whether `path` is an identity key. */
export function isIdentityKey(path: string): path is IdentityKey {
  return (IDENTITY_KEYS as readonly string[]).includes(path);
}

/** The value at a dotted path of a raw config, or `undefined` when absent. */
export function valueAt(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const part of path.split(".")) {
    if (!isRecord(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/**
 * The identity keys a raw config (a file as written, before defaults) sets, in list order. A section set to
 * null (`entitlements: null`) sets none of its keys.
 */
export function identityKeysSet(raw: unknown): IdentityKey[] {
  return IDENTITY_KEYS.filter((k) => valueAt(raw, k) !== undefined);
}

/** The identity keys whose values differ between two configs (parsed or raw), in list order. */
export function identityChanges(before: unknown, after: unknown): IdentityKey[] {
  return IDENTITY_KEYS.filter(
    (k) => JSON.stringify(valueAt(before, k) ?? null) !== JSON.stringify(valueAt(after, k) ?? null),
  );
}

/**
 * Splits a raw single-file config into its identity part and the rest (`vendd config split`): the identity
 * part holds exactly the identity keys the file sets; the rest is the file without them (a mapping left
 * empty by the split is dropped). Neither input is modified.
 */
export function splitIdentity(raw: Record<string, unknown>): {
  identity: Record<string, unknown>;
  rest: Record<string, unknown>;
} {
  const identity: Record<string, unknown> = {};
  const rest = structuredClone(raw);
  for (const key of identityKeysSet(raw)) {
    const parts = key.split(".");
    setAt(identity, parts, valueAt(raw, key));
    deleteAt(rest, parts);
  }
  return { identity, rest };
}

function setAt(root: Record<string, unknown>, parts: readonly string[], value: unknown): void {
  let cur = root;
  for (const [i, part] of parts.entries()) {
    if (i === parts.length - 1) {
      cur[part] = value;
      return;
    }
    const next = cur[part];
    if (isRecord(next)) cur = next;
    else {
      const made: Record<string, unknown> = {};
      cur[part] = made;
      cur = made;
    }
  }
}

function deleteAt(root: Record<string, unknown>, parts: readonly string[]): void {
  const [head, ...tail] = parts;
  if (head === undefined) return;
  if (tail.length === 0) {
    delete root[head];
    return;
  }
  const next = root[head];
  if (!isRecord(next)) return;
  deleteAt(next, tail);
  if (Object.keys(next).length === 0) delete root[head];
}

/**
 * The leaf paths a raw identity file sets that are not identity keys (each is an error: the identity file
 * holds the identity only, every other value has its owner in another layer).
 */
export function nonIdentityPaths(raw: unknown, prefix = ""): string[] {
  if (!isRecord(raw)) return prefix === "" ? [] : [prefix];
  const out: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    if (isIdentityKey(path)) continue;
    if (isRecord(value) && IDENTITY_KEYS.some((k) => k.startsWith(`${path}.`)))
      out.push(...nonIdentityPaths(value, path));
    else out.push(path);
  }
  return out;
}
