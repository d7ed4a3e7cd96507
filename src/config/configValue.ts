/**
 * The value of `config set KEY VALUE`, read by the schema's type of KEY (not by YAML's rules): text stays
 * text (`9999`, `12.00` and `007` alike; one pair of surrounding quotes is dropped, always), a number key
 * takes a decimal number, a yes/no key `true` or `false`, and `null` removes the value: a key that may be
 * null is set to null (`console.pinHash null` turns PIN login off), any other key goes back to its default.
 * Keys the schema does not describe by one plain type (lists, maps, unions) take a YAML flow value.
 */
import { parse as parseYaml } from "yaml";
import * as z from "zod";
import { configSchema } from "./schema.js";

/** What `config set` does to a key: set a value, or delete it from the file (back to the default). */
export type EditValue = { value: unknown } | { remove: true };

/** A zod schema as walked here (zod 4 keeps its definition in `_zod.def`). */
interface Walked {
  _zod: { def: { type: string; innerType?: unknown; in?: unknown; shape?: Record<string, unknown> } };
}

function isWalked(x: unknown): x is Walked {
  if (typeof x !== "object" || x === null || !("_zod" in x)) return false;
  const z = x._zod;
  return typeof z === "object" && z !== null && "def" in z && typeof z.def === "object" && z.def !== null;
}

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

/** The schema under its wrappers, and whether one of them allows null. */
function unwrap(s: Walked): { core: Walked; nullable: boolean } {
  let cur = s;
  let nullable = false;
  for (let i = 0; i < 20; i++) {
    const d = cur._zod.def;
    if (d.type === "nullable") nullable = true;
    const next = WRAPPERS.has(d.type) ? d.innerType : d.type === "pipe" ? d.in : undefined;
    if (!isWalked(next)) break;
    cur = next;
  }
  return { core: cur, nullable };
}

/** The schema of a dotted key (with its wrappers), or null when the config has no such key. */
function keySchema(key: string): Walked | null {
  let s: unknown = configSchema;
  for (const part of key.split(".")) {
    if (!isWalked(s)) return null;
    const { core } = unwrap(s);
    const shape = core._zod.def.shape;
    if (core._zod.def.type !== "object" || shape === undefined || !Object.hasOwn(shape, part)) return null;
    s = shape[part];
  }
  return isWalked(s) ? s : null;
}

/** The schema type of a dotted key: `string`, `number`, `boolean`, `enum`, ... or null when unknown. */
export function keyType(key: string): { type: string; nullable: boolean } | null {
  const s = keySchema(key);
  if (s === null) return null;
  const { core, nullable } = unwrap(s);
  return { type: core._zod.def.type, nullable };
}

/**
 * Whether `value` is valid for `key` by the key's own schema (its type, range, pattern), or why not. Checks
 * that look across keys are the whole config's, made where it is loaded.
 */
export function keyValueProblem(key: string, value: unknown): string | null {
  const s = keySchema(key);
  if (!(s instanceof z.ZodType)) return `${key} is not a key of the unit config`;
  const r = s.safeParse(value);
  if (r.success) return null;
  const first = r.error.issues[0];
  const at = first !== undefined && first.path.length > 0 ? `.${first.path.join(".")}` : "";
  return `${key}${at}: ${first?.message ?? "invalid value"}`;
}

function unquoted(text: string): string {
  const t = text.trim();
  const q = t[0];
  return t.length >= 2 && (q === '"' || q === "'") && t.at(-1) === q ? t.slice(1, -1) : t;
}

/** Reads `text` as the value of `key`; a string is the refusal (what to type instead). */
export function readEditValue(key: string, text: string): EditValue | string {
  const t = text.trim();
  const type = keyType(key);
  if (t === "null") return type?.nullable === true ? { value: null } : { remove: true };
  switch (type?.type) {
    case "string":
    case "enum":
    case "literal":
      return { value: unquoted(t) };
    case "number":
    case "int": {
      const n = unquoted(t);
      if (!/^-?\d{1,15}(\.\d{1,15})?$/.test(n)) return `${key} is a number: not ${n.slice(0, 40)}`;
      return { value: Number(n) };
    }
    case "boolean": {
      const b = unquoted(t);
      if (b !== "true" && b !== "false") return `${key} is true or false: not ${b.slice(0, 40)}`;
      return { value: b === "true" };
    }
    default:
      try {
        return { value: parseYaml(t, { maxAliasCount: 0 }) as unknown };
      } catch {
        return { value: t };
      }
  }
}
