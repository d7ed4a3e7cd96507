/**
 * The layers of a unit's effective config (issue 41), each with one owner, later ones winning:
 *
 *   built-in defaults (the schema, the board profile)
 *   ← `fleet`         the config file (`/etc/vendd/config.yaml`), what a config bundle replaces
 *   ← `group:<name>`  values the fleet holds for a group the unit is in (in the order the document lists)
 *   ← `unit`          values the fleet holds for this one unit
 *   ← `identity`      the unit's identity file (`/etc/vendd/identity.yaml`), which only the unit's owner edits
 *
 * `mergeLayers` is pure: raw values in, the merged raw config and where each value came from out. The schema
 * parses the merged result once (src/config/load.ts), so defaults never mask an explicit value.
 */
import { mergeUnder } from "./boards-merge.js";
import { isRecord } from "./rules.js";

/** A layer's name as `config print --origin` shows it. */
export type LayerName = "fleet" | `group:${string}` | "unit" | "identity";

export interface Layer {
  name: LayerName;
  /** The file it was read from (for messages). */
  source: string;
  /** The raw values as written (no defaults). */
  values: unknown;
}

export interface Merged {
  /** The layers deep-merged, later over earlier (mappings key by key; lists and scalars replaced). */
  raw: unknown;
  /** The layer that set a dotted path (or the nearest enclosing path that a layer set), or null. */
  originOf(path: string): Layer | null;
}

/** Merges `layers` in order, later over earlier (the list above). */
export function mergeLayers(layers: readonly Layer[]): Merged {
  let raw: unknown;
  for (const layer of layers) raw = raw === undefined ? layer.values : mergeUnder(raw, layer.values);
  return {
    raw,
    originOf(path) {
      // The last layer that covers the path: it sets the path itself, or sets an enclosing path to a value
      // that is not a mapping (a list, a scalar, null: what is below it is that layer's doing).
      const parts = splitPath(path);
      for (let i = layers.length - 1; i >= 0; i--) {
        const layer = layers[i];
        if (layer === undefined) continue;
        for (let n = parts.length; n > 0; n--) {
          const found = at(layer.values, parts.slice(0, n));
          if (found.present && (n === parts.length || !isRecord(found.value))) return layer;
        }
      }
      return null;
    },
  };
}

/** `a.b[2].c` → `["a", "b", 2, "c"]`. */
function splitPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of path.split(/\.|(?=\[)/)) {
    const index = /^\[(\d+)\]$/.exec(part);
    if (index) out.push(Number(index[1]));
    else if (part !== "") out.push(part);
  }
  return out;
}

function at(root: unknown, parts: readonly (string | number)[]): { present: boolean; value?: unknown } {
  let cur: unknown = root;
  for (const part of parts) {
    if (typeof part === "number") {
      if (!Array.isArray(cur)) return { present: false };
      cur = cur[part];
    } else {
      if (!isRecord(cur) || !Object.hasOwn(cur, part)) return { present: false };
      cur = cur[part];
    }
    if (cur === undefined) return { present: false };
  }
  return { present: true, value: cur };
}
