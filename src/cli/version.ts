/**
 * The version of vendd, from its package.json: beside `src/` when run from source, one level higher when
 * run from `dist/src/`. Read at call time (a few hundred bytes), so the build never copies it.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

/** The package version, e.g. `0.1.0`; throws when no vendd package.json is found next to the code. */
export function packageVersion(): string {
  for (const up of ["../..", "../../.."]) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(resolve(import.meta.dirname, up, "package.json"), "utf8"));
    } catch {
      continue;
    }
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      "name" in parsed &&
      parsed.name === "vendd" &&
      "version" in parsed &&
      typeof parsed.version === "string"
    ) {
      return parsed.version;
    }
  }
  throw new Error("package.json of vendd not found beside the program");
}
