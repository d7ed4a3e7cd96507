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
  const list = r.error.issues
    .map((i) => {
      const where = i.path.join(".") || "(top)";
      if (i.code !== "unrecognized_keys") return `${where}: ${i.message}`;
      if (secretKeys === undefined) return `${where}: unknown key(s) ${i.keys.join(", ")}`;
      const at = i.path.map(String);
      return `${where}: ${unknownKeysMessage(
        i.keys.map((k) => secretKeys.keyLine([...at, k])),
        secretKeys.allowed,
      )}`;
    })
    .join("; ");
  throw new FleetConfigError(`${what}: ${list}`);
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
