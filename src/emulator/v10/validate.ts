import { amountFromJson, type Minor } from "../../core/money.js";
import { fail } from "./errors.js";

/**
 * Field formats of pos-v10 §14. "Valid characters" are the service's published set: digits, ASCII letters,
 * space, Nordic and Western European letters, ASCII punctuation and a few symbols.
 */
const VALID_CHARS = new Set(
  [
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ",
    "æÆøØåÅäÄöÖšŠžŽâÂàÀáÁãÃéÉêÊëËèÈíÍîÎïÏìÌüÜûÛùÙúÚôÔòÒóÓõÕÿýÝñÑ",
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    "¦¯¨´×«»ðþçß¤ÇµÐÞ±°ªº©§¶¼½¾¬®¢£¥¡¿¹²³",
  ].join(""),
);

export const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** A beaconId: a GUID or exactly 15 digits (pos-v10 §14). */
export const BEACON_ID =
  /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\d{15})$/;
/** Merchant VAT number: `DK` or `FI` plus 8 digits, no dash (pos-v10 §3, §14). */
export const VAT = /^(?:DK|FI)\d{8}$/;
/** Client system version `Major.Minor.Build` (pos-v10 §3). */
export const VERSION = /^\d{1,9}\.\d{1,9}\.\d{1,9}$/;
/** merchantBrandId: 10 characters, e.g. `POSDK12345` (pos-v10 §14). */
export const BRAND_ID = /^[A-Za-z0-9]{10}$/;
/** merchantLocationId: exactly 5 characters, e.g. `10001` (pos-v10 §14). */
export const LOCATION_ID = /^[A-Za-z0-9]{5}$/;

/** True for a non-empty string of at most `max` valid characters (pos-v10 §14). */
export function isValidText(value: unknown, max = 36): value is string {
  if (typeof value !== "string" || value.length === 0 || value.length > max) return false;
  for (const ch of value) if (!VALID_CHARS.has(ch)) return false;
  return true;
}

/** A required text field; `code` when missing or invalid. */
export function text(body: Record<string, unknown>, field: string, code: string): string {
  const v = body[field];
  if (!isValidText(v)) fail(400, code, `${field} must be 1-36 valid characters`);
  return v;
}

/** An optional, nullable text field; `code` when invalid. */
export function optionalText(body: Record<string, unknown>, field: string, code: string): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (!isValidText(v)) fail(400, code, `${field} must be 1-36 valid characters or null`);
  return v;
}

/** A required positive amount with at most two decimals, read exactly (pos-v10 §14); else 1102. */
export function amount(body: Record<string, unknown>, field = "amount"): Minor {
  try {
    const minor = amountFromJson(body[field]);
    if (minor > 0) return minor;
  } catch {
    // falls through to the protocol error below
  }
  fail(400, "1102", `${field} must be a positive number with at most 2 decimals`);
}

/** One of a closed set of strings; `code` (default 1099) otherwise. */
export function oneOf<T extends string>(
  body: Record<string, unknown>,
  field: string,
  values: readonly T[],
  code = "1099",
): T {
  const v = body[field];
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) {
    fail(400, code, `${field} must be one of ${values.join(", ")}`);
  }
  return v as T;
}

/** A required string of any content (identifiers checked later); 1099 when absent or not a string. */
export function str(body: Record<string, unknown>, field: string): string {
  const v = body[field];
  if (typeof v !== "string") fail(400, "1099", `${field} must be a string`);
  return v;
}
