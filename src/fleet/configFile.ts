/**
 * Reading and checking the fleet's YAML files (fleet config, fleet secrets): through the project's one loader
 * (size limit, linear duplicate-key check), checked by a schema with errors that name paths, never values.
 */
import type { z } from "zod";
import { type KeyLine, loadStructuredFile } from "../config/files.js";
import { unknownKeysMessage } from "../config/secrets.js";

export class FleetConfigError extends Error {
  override readonly name = "FleetConfigError";
}

const SECRET_KEY = /secret|password|passphrase$|apikey|api_key|token$|salt$/i;

/** Reads a YAML or JSON file through the project's one loader (size limit, linear duplicate check). */
export function readYaml(path: string, what: string): { value: unknown; keyLine: KeyLine } {
  const read = loadStructuredFile(path, what);
  if (!read.ok) throw new FleetConfigError(read.message);
  return read;
}

/**
 * `value` checked against `schema`; FleetConfigError with paths and messages only, never a value. With
 * `secretKeys` (a secrets file: its keys may be secrets), unknown keys are counted and located by line.
 */
export function check<T>(
  schema: z.ZodType<T>,
  value: unknown,
  what: string,
  secretKeys?: { keyLine: KeyLine; allowed: string },
): T {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  throw new FleetConfigError(`${what}: ${issueList(r.error.issues, secretKeys).join("; ")}`);
}

/** The issues of a failed check, each `path: message` (unknown keys named, located in a secrets file). */
export function issueList(
  issues: readonly z.ZodIssue[],
  secretKeys?: { keyLine: KeyLine; allowed: string },
): string[] {
  return issues.map((i) => {
    const where = i.path.join(".") || "(top)";
    if (i.code !== "unrecognized_keys") return `${where}: ${i.message}`;
    if (secretKeys === undefined) return `${where}: unknown key(s) ${i.keys.join(", ")}`;
    const at = i.path.map(String);
    return `${where}: ${unknownKeysMessage(
      i.keys.map((k) => secretKeys.keyLine([...at, k])),
      secretKeys.allowed,
    )}`;
  });
}

/**
 * `value` checked against an object `schema`, every problem collected: the issues, and the value checked
 * again without the top-level keys they are in, so that the rest can still be used (and its files checked)
 * in the same start. `data` is that rest (empty when even it fails).
 */
export function checkAll<T>(schema: z.ZodType<T>, value: unknown): { data: T | null; problems: string[] } {
  const r = schema.safeParse(value ?? {});
  if (r.success) return { data: r.data, problems: [] };
  const problems = issueList(r.error.issues);
  const rest: Record<string, unknown> =
    typeof value === "object" && value !== null ? { ...(value as Record<string, unknown>) } : {};
  for (const i of r.error.issues) {
    const top = i.path[0];
    if (top !== undefined) delete rest[String(top)];
    else if (i.code === "unrecognized_keys") for (const k of i.keys) delete rest[k];
  }
  const again = schema.safeParse(rest);
  return { data: again.success ? again.data : null, problems };
}

/** Keys anywhere in `doc` that look like secrets (dotted paths). */
export function secretKeys(doc: unknown, at: string[] = []): string[] {
  if (typeof doc !== "object" || doc === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    const path = [...at, k];
    if (SECRET_KEY.test(k) && k !== "secretsFile" && !/File$/.test(k)) out.push(path.join("."));
    out.push(...secretKeys(v, path));
  }
  return out;
}
