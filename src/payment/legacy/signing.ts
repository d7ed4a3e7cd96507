import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Request signing of the older operation-based interface (pos-legacy §3, §4; seed "Older interface: HMAC
 * of PaymentStart"). Pure functions: no clock, no I/O.
 */

export type SigningErrorCode = "notLatin1" | "badHeader";

export class SigningError extends Error {
  override readonly name = "SigningError";
  constructor(
    readonly code: SigningErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The `Authorization` header value (pos-legacy §3):
 * `Base64(HMAC-SHA256(UTF-8(apiKey), UTF-8(requestUrl + " " + body + " " + unixTs))) + " " + unixTs`.
 * @param requestUrl the full absolute URL as requested (scheme, host, port, path).
 * @param body the exact JSON text sent; sign the string you send.
 * @param unixTs whole seconds since the Unix epoch (UTC).
 */
export function authorizationHeader(
  apiKey: string,
  requestUrl: string,
  body: string,
  unixTs: number,
): string {
  const ts = wholeSeconds(unixTs);
  return `${authorizationDigest(apiKey, Buffer.from(`${requestUrl} ${body} ${ts}`, "utf8"))} ${ts}`;
}

function authorizationDigest(apiKey: string, message: Buffer): string {
  return createHmac("sha256", Buffer.from(apiKey, "utf8")).update(message).digest("base64");
}

function wholeSeconds(unixTs: number): string {
  if (!Number.isSafeInteger(unixTs) || unixTs < 0) {
    throw new SigningError("badHeader", "unixTs must be a non-negative whole number of seconds");
  }
  return String(unixTs);
}

/** Inputs of the PaymentStart HMAC; `amount` is the exact two-decimal string sent (`"43.33"`). */
export interface PaymentStartHmacFields {
  merchantId: string;
  locationId: string;
  posId: string;
  orderId: string;
  amount: string;
  bulkRef: string;
}

/**
 * The `HMAC` field of PaymentStart (seed "HMAC of PaymentStart", pos-legacy §4.1): Base64 with padding of
 * HMAC-SHA256(keyBytes, ISO-8859-1 of `{MerchantId}{LocationId}#{PoSId}#{OrderId}#{Amount}#{BulkRef}#`),
 * every field trimmed. Takes key bytes so both the seed's text key ({@link merchantKeyBytes}) and the
 * real service's derived 32-byte key (§4.2) work.
 * @throws SigningError `notLatin1` when a field holds a character outside ISO-8859-1.
 */
export function paymentStartHmac(keyBytes: Buffer, f: PaymentStartHmacFields): string {
  const text = `${f.merchantId.trim()}${f.locationId.trim()}#${f.posId.trim()}#${f.orderId.trim()}#${f.amount.trim()}#${f.bulkRef.trim()}#`;
  return createHmac("sha256", keyBytes).update(latin1Bytes(text, "HMAC field")).digest("base64");
}

/** ISO-8859-1 bytes of the MerchantKey text (seed: "the ISO-8859-1 byte form of the MerchantKey"). */
export function merchantKeyBytes(text: string): Buffer {
  return latin1Bytes(text, "MerchantKey");
}

/** True when every character of `text` is in ISO-8859-1 (U+0000..U+00FF). */
export function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) return false;
  }
  return true;
}

function latin1Bytes(text: string, what: string): Buffer {
  // Node's "latin1" encoder silently drops the high byte of wider characters, so refuse them first.
  if (!isLatin1(text)) throw new SigningError("notLatin1", `${what} contains a character outside ISO-8859-1`);
  return Buffer.from(text, "latin1");
}

/** Inputs of {@link verifyAuthorization}. */
export interface AuthorizationCheck {
  apiKey: string;
  /** The absolute URL rebuilt by the receiver (`http://` + Host + path). */
  requestUrl: string;
  /** The exact body bytes received. */
  body: Buffer;
  /** The received `Authorization` header, if any. */
  header: string | string[] | undefined;
  /** Receiver time, ms since the Unix epoch. */
  nowMs: number;
  /** Accepted clock difference, seconds (default 300, pos-legacy §3 emulator verification). */
  toleranceS?: number;
}

const HEADER = /^([A-Za-z0-9+/]{43}=) (\d{1,12})$/;

/**
 * Checks an `Authorization` header (pos-legacy §3): two tokens, the timestamp within ±`toleranceS` of
 * `nowMs`, the digest compared in constant time. Returns false for any malformed or repeated header.
 */
export function verifyAuthorization(c: AuthorizationCheck): boolean {
  if (typeof c.header !== "string") return false;
  const m = HEADER.exec(c.header);
  const digest = m?.[1];
  const tsText = m?.[2];
  if (digest === undefined || tsText === undefined) return false;
  const ts = Number(tsText);
  if (Math.abs(c.nowMs / 1000 - ts) > (c.toleranceS ?? 300)) return false;
  const message = Buffer.concat([Buffer.from(`${c.requestUrl} `, "utf8"), c.body, Buffer.from(` ${tsText}`)]);
  const expected = Buffer.from(authorizationDigest(c.apiKey, message), "base64");
  const given = Buffer.from(digest, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
