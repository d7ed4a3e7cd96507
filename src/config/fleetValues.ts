/**
 * Values the fleet holds for one unit (issue 41): the `group:<name>` and `unit` layers of its config
 * (src/config/layers.ts). The fleet keeps them per group and per unit as dotted keys (src/fleet/values), and
 * sends each unit one document made for it alone: its unit id, its groups' values in its group order, and
 * its own values, signed with the fleet's values key (src/update/unitValues.ts). The daemon verifies the
 * document (signature, purpose, unit id) before it writes it beside the unit key (`fleet-values.json`, 0600,
 * atomic; src/daemon/valuesFetch.ts); loading the config reads that file back into the layers here.
 *
 * A value never sets an identity key (src/config/identity.ts): the fleet refuses one when it is set, and a
 * document carrying one is refused whole here too.
 */
import { dirname, join } from "node:path";
import * as z from "zod";
import { IDENTITY_KEYS, isIdentityKey } from "./identity.js";
import type { Layer } from "./layers.js";

/** The file beside the unit key that keeps the values the fleet sent (the signed document as received). */
export const HELD_VALUES_FILE_NAME = "fleet-values.json";

/** The held values file of a unit whose key file is `keyFile`. */
export function heldValuesFile(keyFile: string): string {
  return join(dirname(keyFile), HELD_VALUES_FILE_NAME);
}

/** A dotted config key as the fleet holds it (`display.idleText`, `vend.timeoutSeconds`). */
export const VALUE_KEY = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*){0,7}$/;

const values = z
  .record(z.string().regex(VALUE_KEY, "a dotted config key"), z.unknown())
  .refine((r) => Object.keys(r).length <= 500, "at most 500 values");

/** The document the fleet signs for one unit: exactly the bytes signed are the JSON of this. */
export const UnitValuesDocument = z.strictObject({
  version: z.literal(1),
  /** The unit it was made for: a unit refuses a document made for another. */
  unitId: z.string().min(1).max(64),
  /** When the fleet made it (epoch ms): a unit refuses one older than the one it holds. */
  issuedAt: z.number().int().nonnegative().max(8.64e15),
  /** The unit's groups that hold values, in the unit's group order (later over earlier). */
  groups: z.array(z.strictObject({ name: z.string().min(1).max(63), values })).max(64),
  /** This unit's own values (over its groups'). */
  unit: values,
});
export type UnitValuesDocument = z.infer<typeof UnitValuesDocument>;

/** The held file and the `GET /values` body: the signed document and its minisign signature. */
export const SignedValues = z.strictObject({
  document: z
    .string()
    .min(1)
    .max(1024 * 1024),
  signature: z.string().min(1).max(4096),
  /** In the held file: the fleet's ETag of these values (the heartbeat's `valuesEtag`). */
  etag: z.string().max(128).optional(),
});
export type SignedValues = z.infer<typeof SignedValues>;

/** The ETag of a unit the fleet holds no values for; a unit without a values file holds it. */
export const NO_VALUES_ETAG = '"v-none"';

/**
 * Why a key cannot be a fleet-held value, or null when it can: an identity key, or a mapping holding one,
 * or a key inside one, lives only on the unit.
 */
export function identityKeyProblem(key: string): string | null {
  if (isIdentityKey(key))
    return `${key} is an identity key: it lives only on the unit (identity.yaml), never in a fleet value`;
  const inside = IDENTITY_KEYS.find((k) => k.startsWith(`${key}.`));
  if (inside !== undefined)
    return `${key} holds the identity key ${inside}: set the keys inside it one by one instead`;
  const over = IDENTITY_KEYS.find((k) => key.startsWith(`${k}.`));
  if (over !== undefined)
    return `${key} is inside the identity key ${over}: it lives only on the unit (identity.yaml)`;
  return null;
}

/**
 * Parses a document (its JSON text) made for `unitId`. Throws an Error naming what is wrong: not JSON, not a
 * values document, another unit's, or one setting an identity key.
 */
export function parseValuesDocument(text: string, unitId: string): UnitValuesDocument {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error("the values document is not JSON");
  }
  const r = UnitValuesDocument.safeParse(json);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new Error(`the values document is malformed at ${first?.path.join(".") || "(document)"}`);
  }
  const doc = r.data;
  if (doc.unitId !== unitId)
    throw new Error(`the values are for unit ${JSON.stringify(doc.unitId)}, not this unit (${unitId})`);
  for (const layer of [...doc.groups.map((g) => g.values), doc.unit])
    for (const key of Object.keys(layer)) {
      const problem = identityKeyProblem(key);
      if (problem !== null) throw new Error(`the values document sets ${problem}`);
    }
  return doc;
}

/** `{"a.b": 1}` → `{a: {b: 1}}` (a raw config layer). */
export function nestValues(flat: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split(".");
    let cur = out;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) {
        cur[part] = value;
        break;
      }
      const next = cur[part];
      if (typeof next === "object" && next !== null && !Array.isArray(next))
        cur = next as Record<string, unknown>;
      else {
        const made: Record<string, unknown> = {};
        cur[part] = made;
        cur = made;
      }
    }
  }
  return out;
}

/** The `group:<name>` layers (in the document's order) and the `unit` layer of a document. */
export function valuesLayers(doc: UnitValuesDocument, source: string): Layer[] {
  const layers: Layer[] = doc.groups
    .filter((g) => Object.keys(g.values).length > 0)
    .map((g) => ({ name: `group:${g.name}` as const, source, values: nestValues(g.values) }));
  if (Object.keys(doc.unit).length > 0) layers.push({ name: "unit", source, values: nestValues(doc.unit) });
  return layers;
}
