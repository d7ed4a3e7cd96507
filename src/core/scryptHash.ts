import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * The one scrypt hash format of vendd, for the console PIN (src/core/pin.ts) and the technician badges
 * (drivers/nfc/badges.ts). Configuration holds only such hashes:
 *   `scrypt$<N>$<r>$<p>$<salt, base64url>$<32-byte key, base64url>`
 * N is a power of two 1024..1048576, r 1..16, p 1..4, so one check cannot take seconds or hundreds of MiB.
 * Secrets and their hashes are never logged or put in messages.
 */
export const SCRYPT_HASH_FORMAT =
  /^scrypt\$(\d{1,7})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{43})$/;

const KEY_BYTES = 32;

export interface ScryptHash {
  salt: Buffer;
  key: Buffer;
  params: ScryptOptions;
}

/** What is wrong with a hash string: its shape, its scrypt parameters, or its key's length. */
export type ScryptHashFault = "format" | "params" | "key";

/** The scrypt options for N, r, p, or null when they are out of range. */
export function scryptParams(N: number, r: number, p: number): ScryptOptions | null {
  // N a power of two (scrypt), and bounded so one check cannot take seconds or hundreds of MiB.
  if (N < 1024 || N > 1_048_576 || (N & (N - 1)) !== 0 || r < 1 || r > 16 || p < 1 || p > 4) return null;
  return { N, r, p, maxmem: 256 * N * r * p };
}

/** The hash's parts, or what is wrong with it. */
export function parseScryptHash(hash: string): ScryptHash | ScryptHashFault {
  const m = SCRYPT_HASH_FORMAT.exec(hash);
  if (!m) return "format";
  const params = scryptParams(Number(m[1]), Number(m[2]), Number(m[3]));
  if (params === null) return "params";
  const key = Buffer.from(m[5] ?? "", "base64url");
  if (key.length !== KEY_BYTES) return "key";
  return { salt: Buffer.from(m[4] ?? "", "base64url"), key, params };
}

function derive(secret: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_BYTES, params, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** The hash string for `secret` with a fresh salt, r 8 and p 1. Null when `cost` (scrypt's N) is out of range. */
export async function createScryptHash(secret: string, cost: number): Promise<string | null> {
  const params = scryptParams(cost, 8, 1);
  if (params === null) return null;
  const salt = randomBytes(16);
  const key = await derive(secret, salt, params);
  return `scrypt$${cost}$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** Whether `secret` matches the parsed hash: always derives, and compares in constant time. */
export async function verifyScryptHash(secret: string, hash: ScryptHash): Promise<boolean> {
  const key = await derive(secret, hash.salt, hash.params);
  return timingSafeEqual(key, hash.key);
}
