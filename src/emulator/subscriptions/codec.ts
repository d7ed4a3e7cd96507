import { hasDayShape } from "../../core/days.js";
import { type Minor, MoneyFormatError, parseAmount } from "../../core/money.js";

/** A synchronous 400 of the subscriptions interfaces: the message names the field. */
export class SubsInputError extends Error {
  override readonly name = "SubsInputError";
}

export type Obj = Record<string, unknown>;

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new SubsInputError("body is not valid JSON");
  }
}

export function obj(value: unknown, what: string): Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SubsInputError(`${what} must be an object`);
  return value as Obj;
}

export function str(value: unknown, what: string, max?: number): string {
  if (typeof value !== "string" || value.trim() === "") throw new SubsInputError(`${what} is required`);
  if (max !== undefined && value.length > max)
    throw new SubsInputError(`${what} must be at most ${max} characters`);
  return value;
}

export function optStr(value: unknown, what: string, max?: number): string | null {
  return value === undefined || value === null ? null : str(value, what, max);
}

export function int(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value))
    throw new SubsInputError(`${what} must be an integer`);
  return value;
}

export function bool(value: unknown, what: string): boolean {
  if (typeof value !== "boolean") throw new SubsInputError(`${what} must be a boolean`);
  return value;
}

/**
 * An amount as the seed allows it: a JSON number or a decimal string with a dot and at most two places
 * (examples show both). Returns minor units.
 */
export function amount(value: unknown, what: string): Minor {
  let text: string;
  if (typeof value === "number" && Number.isFinite(value)) text = String(value);
  else if (typeof value === "string") text = value;
  else throw new SubsInputError(`${what} must be a decimal amount`);
  try {
    return parseAmount(text, 2);
  } catch (e: unknown) {
    if (e instanceof MoneyFormatError) throw new SubsInputError(`${what}: ${e.message}`);
    throw e;
  }
}

export function date(value: unknown, what: string): string {
  if (typeof value !== "string" || !hasDayShape(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    throw new SubsInputError(`${what} must be a date YYYY-MM-DD`);
  if (new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value)
    throw new SubsInputError(`${what} is not a calendar date`);
  return value;
}

/** An https URL (the seed's rule for every merchant link and callback URL). */
export function httpsUrl(value: unknown, what: string): string {
  const text = str(value, what);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SubsInputError(`${what} is not a URL`);
  }
  if (url.protocol !== "https:")
    throw new SubsInputError(`${what}: the hyperlink reference must use the https scheme`);
  return text;
}

/** RFC 7235 §2.1 token68. */
export const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Reads an RFC 6902 JSON Patch body: a non-empty array of `{op, path, value}`. */
export function jsonPatch(value: unknown): { op: string; path: string; value: unknown }[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new SubsInputError("body must be a JSON Patch array (RFC 6902)");
  return value.map((v, i) => {
    const o = obj(v, `patch[${i}]`);
    return { op: str(o.op, `patch[${i}].op`), path: str(o.path, `patch[${i}].path`), value: o.value };
  });
}

/** Content-Type must be application/json on POST, PATCH and PUT (seed 000 general conventions). */
export function isJson(contentType: string | undefined): boolean {
  const t = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  return t === "application/json" || t === "application/json-patch+json";
}
