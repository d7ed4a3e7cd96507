import { type Minor, MoneyFormatError, parseAmount } from "../../core/money.js";

/**
 * Request-field reading for the older interface. Field names are matched case-insensitively (pos-legacy §2:
 * clients sent `PosId` or `POSId`); every refusal is a `LegacyFault` with StatusCode 10 and a precise text.
 */

/** A 400 answer `{StatusCode, StatusText}` (seed "Errors": older interface). */
export class LegacyFault extends Error {
  override readonly name = "LegacyFault";
  constructor(
    readonly statusCode: number,
    readonly statusText: string,
  ) {
    super(statusText);
  }
}

/** Request fields keyed by lower-case name. */
export type Fields = ReadonlyMap<string, unknown>;

export function invalid(text: string): LegacyFault {
  return new LegacyFault(10, `Missing or invalid parameters: ${text}`);
}

/** Parses a JSON object body into case-insensitive fields; refuses non-objects and case-duplicated names. */
export function parseFields(body: Buffer): Fields {
  if (body.length === 0) throw invalid("the request body is empty");
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    throw invalid("the request body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid("the request body must be a JSON object");
  }
  const fields = new Map<string, unknown>();
  for (const [key, v] of Object.entries(value)) {
    const lower = key.toLowerCase();
    if (fields.has(lower)) throw invalid(`field ${key} appears more than once (names are case-insensitive)`);
    fields.set(lower, v);
  }
  return fields;
}

export interface StringRule {
  /** Maximum length in characters (default 256). */
  max?: number;
  /** Whether `""` is accepted (default false). */
  empty?: boolean;
}

/** A required string field. */
export function str(f: Fields, name: string, rule: StringRule = {}): string {
  const v = f.get(name.toLowerCase());
  if (v === undefined) throw invalid(`${name} is required`);
  return checkString(name, v, rule);
}

/** An optional string field: `undefined` when absent or null. */
export function optStr(f: Fields, name: string, rule: StringRule = {}): string | undefined {
  const v = f.get(name.toLowerCase());
  if (v === undefined || v === null) return undefined;
  return checkString(name, v, rule);
}

function checkString(name: string, v: unknown, rule: StringRule): string {
  if (typeof v !== "string") throw invalid(`${name} must be a string`);
  const max = rule.max ?? 256;
  if (v.length > max) throw invalid(`${name} is longer than ${max} characters`);
  if (v.length === 0 && rule.empty !== true) throw invalid(`${name} must not be empty`);
  return v;
}

/** A PoSUnitId: 15 digits (pos-legacy §2). */
export function unitId(f: Fields): string {
  const v = str(f, "PoSUnitId", { max: 15 });
  if (!/^\d{15}$/.test(v)) throw invalid("PoSUnitId must be 15 digits");
  return v;
}

/** An amount string with exactly two decimals (seed: "2 decimals, dot, no thousand separators"). */
export function amount(f: Fields, name = "Amount"): { text: string; minor: Minor } {
  const text = str(f, name, { max: 20 });
  return { text, minor: parseExact(name, text) };
}

export function parseExact(name: string, text: string): Minor {
  try {
    return parseAmount(text, 2, true);
  } catch (e) {
    if (e instanceof MoneyFormatError)
      throw invalid(`${name} must be a decimal string with exactly 2 decimals`);
    throw e;
  }
}

/** `CustomerTokenCalc`: 0 or 1, as a JSON number or a numeric string (pos-legacy §2). */
export function tokenCalc(f: Fields): 0 | 1 {
  const v = f.get("customertokencalc");
  if (v === undefined) throw invalid("CustomerTokenCalc is required");
  if (v === 0 || v === "0") return 0;
  if (v === 1 || v === "1") return 1;
  throw invalid("CustomerTokenCalc must be 0 or 1");
}

/** A field that must be one of `values` (exact spelling). */
export function oneOf<T extends string>(f: Fields, name: string, values: readonly T[]): T {
  const v = str(f, name, { max: 32 });
  const hit = values.find((x) => x === v);
  if (hit === undefined) throw invalid(`${name} must be one of ${values.join(", ")}`);
  return hit;
}
