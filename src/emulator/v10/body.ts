import type { EmuRequest } from "../types.js";
import { fail } from "./errors.js";

/** Media types the real service accepted for JSON bodies (pos-v10 §1). */
function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  return (
    type === "application/json" ||
    type === "text/json" ||
    type === "application/json-patch+json" ||
    (type.startsWith("application/") && type.endsWith("+json"))
  );
}

/**
 * Reads a JSON object body: unsupported Content-Type → `415` code 1099, malformed JSON or not an object →
 * `400` 1099, a field outside `allowed` → `400` 1099 (every schema object is `additionalProperties: false`,
 * pos-v10 §1, §19). With `optional`, an empty body reads as `{}`.
 */
export function jsonBody(
  req: EmuRequest,
  allowed: readonly string[],
  optional = false,
): Record<string, unknown> {
  if (req.body.length === 0) {
    if (optional) return {};
    fail(400, "1099", "request body is required");
  }
  if (!isJsonType(req.headers["content-type"])) fail(415, "1099", "Content-Type must be application/json");
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.body.toString("utf8"));
  } catch {
    fail(400, "1099", "request body is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    fail(400, "1099", "request body must be a JSON object");
  }
  const body = parsed as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) fail(400, "1099", `unknown field ${JSON.stringify(key.slice(0, 40))}`);
  }
  return body;
}

/** A canonical text of a JSON value (object keys sorted), to compare "the same request" (pos-v10 §9). */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
