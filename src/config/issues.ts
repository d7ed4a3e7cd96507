/**
 * Config errors: every problem is one `ConfigIssue` with a dotted path, and startup refuses the config with
 * all of them at once (style anchors, habit 5). Messages are built from the schema's rule and the KIND of the
 * offending value, never from the value itself, so a secret typed into the wrong place is never echoed.
 */
import type * as z from "zod";
import { printable } from "../core/printable.js";

/** One problem in a config or secrets file. */
export interface ConfigIssue {
  /** Dotted path such as `payment.v10.merchantVat`; array items as `supportedBeaconTypes[1]`. */
  path: string;
  message: string;
}

export type ConfigErrorCode =
  /** A file could not be read or parsed. */
  | "config_unreadable"
  /** The content broke the schema (or a secret is missing). */
  | "config_invalid";

/** Thrown when a configuration is refused. `issues` lists every problem found in one run. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly code: ConfigErrorCode;
  readonly issues: readonly ConfigIssue[];

  constructor(
    issues: readonly ConfigIssue[],
    source = "configuration",
    code: ConfigErrorCode = "config_invalid",
  ) {
    const noun = issues.length === 1 ? "error" : "errors";
    super(
      `${source}: ${issues.length} ${noun}\n${issues.map((i) => `  ${i.path}: ${i.message}`).join("\n")}`,
    );
    this.code = code;
    this.issues = issues;
  }
}

/** Key names that hold secrets: they belong in the secrets file or the environment (reliability.md §5). */
const SECRET_KEY_NAMES: ReadonlySet<string> = new Set([
  "clientSecret",
  "apiKey",
  "merchantKey",
  "password",
  "token",
  "accessToken",
]);

/** Characters shown of one key in a path: an unknown key is file content, possibly binary junk. */
const MAX_KEY_CHARS = 64;

/**
 * Renders a zod path as `a.b[2].c`; the empty path is `(root)`. Keys come from the file, so each is
 * escaped and capped (`printable`).
 */
export function formatPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = printable(String(part), MAX_KEY_CHARS);
      out += out === "" ? key : `.${key}`;
    }
  }
  return out === "" ? "(root)" : out;
}

/** The kind of a value for messages: never the value itself. */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  switch (typeof value) {
    case "object":
      return "a mapping";
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    default:
      return typeof value;
  }
}

const EXPECTED: Readonly<Record<string, string>> = {
  object: "a mapping",
  array: "a list",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  null: "null",
};

/**
 * Per-parse message builder for zod (`schema.safeParse(x, { error: describeIssue })`). Messages given in the
 * schema take precedence; this supplies the rest.
 */
export function describeIssue(iss: z.core.$ZodRawIssue): string | undefined {
  switch (iss.code) {
    case "invalid_type": {
      if (iss.input === undefined) return "required";
      const want = EXPECTED[iss.expected] ?? iss.expected;
      const hint = iss.expected === "string" && typeof iss.input === "number" ? " (quote it in YAML)" : "";
      return `must be ${want}, got ${kindOf(iss.input)}${hint}`;
    }
    case "invalid_value":
      return iss.values.length === 1
        ? `must be ${String(iss.values[0])}`
        : `must be one of: ${iss.values.map(String).join(", ")}`;
    case "too_small":
      return bound(iss.origin, "at least", iss.minimum, iss.inclusive);
    case "too_big":
      return bound(iss.origin, "at most", iss.maximum, iss.inclusive);
    case "invalid_format":
      return iss.format === "url" ? "must be an http(s) URL" : `must be a valid ${iss.format}`;
    case "unrecognized_keys":
      return "unknown key";
    default:
      return undefined;
  }
}

function bound(origin: string, word: string, limit: number | bigint, inclusive: boolean | undefined): string {
  const n = Number(limit);
  if (origin === "string") return `must be ${word} ${n} characters long`;
  if (origin === "array" || origin === "set") return `must have ${word} ${n} items`;
  if (inclusive === false) return `must be ${word === "at least" ? "greater" : "less"} than ${n}`;
  return `must be ${word} ${n}`;
}

/**
 * Flattens zod issues into config issues: one per unknown key, paths prefixed with `prefix`.
 * @param secretHint add the "secrets belong elsewhere" hint to unknown secret-named keys (main config only).
 */
export function toConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix = "",
  secretHint = true,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const iss of issues) {
    if (iss.code === "unrecognized_keys") {
      for (const key of iss.keys) {
        const message =
          secretHint && SECRET_KEY_NAMES.has(key)
            ? "unknown key (secrets belong in the secrets file or the environment, never in the main config)"
            : "unknown key";
        out.push({ path: formatPath([...iss.path, key], prefix), message });
      }
    } else {
      out.push({ path: formatPath(iss.path, prefix), message: iss.message });
    }
  }
  return out;
}
