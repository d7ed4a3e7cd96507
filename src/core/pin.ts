import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * The technician console PIN. Configuration holds only its scrypt hash (`vendd console hash-pin` makes it):
 *   `scrypt$<N>$<r>$<p>$<salt, base64url>$<32-byte key, base64url>`
 * the same format as the badge hashes. A PIN is 4 to 32 digits. PINs and their hashes are never logged.
 */
export const PIN_HASH_FORMAT =
  /^scrypt\$(\d{1,7})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{43})$/;

export const PIN_PATTERN = /^\d{4,32}$/;

const KEY_BYTES = 32;

export interface ParsedPinHash {
  salt: Buffer;
  key: Buffer;
  params: ScryptOptions;
}

/** The hash's parts, or a message saying what is wrong with it (never the hash itself). */
export function parsePinHash(hash: string): ParsedPinHash | string {
  const m = PIN_HASH_FORMAT.exec(hash);
  if (!m) return "must be scrypt$N$r$p$salt$key (from `vendd console hash-pin`)";
  const N = Number(m[1]);
  const r = Number(m[2]);
  const p = Number(m[3]);
  if (N < 1024 || N > 1_048_576 || (N & (N - 1)) !== 0 || r < 1 || r > 16 || p < 1 || p > 4)
    return "scrypt parameters out of range (N a power of two 1024..1048576, r 1..16, p 1..4)";
  const key = Buffer.from(m[5] ?? "", "base64url");
  if (key.length !== KEY_BYTES) return "key must be 32 bytes";
  return { salt: Buffer.from(m[4] ?? "", "base64url"), key, params: { N, r, p, maxmem: 256 * N * r * p } };
}

function derive(secret: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_BYTES, params, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** The configuration string for a PIN. `cost` is scrypt's N. */
export async function hashPin(pin: string, cost = 16_384): Promise<string> {
  if (!PIN_PATTERN.test(pin)) throw new Error("a PIN is 4 to 32 digits");
  const salt = randomBytes(16);
  const parsed = parsePinHash(`scrypt$${cost}$8$1$${salt.toString("base64url")}$${"A".repeat(43)}`);
  if (typeof parsed === "string") throw new Error(parsed);
  const key = await derive(pin, salt, parsed.params);
  return `scrypt$${cost}$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/**
 * Whether `pin` matches the parsed hash: always derives (also for input that is not a PIN, so a wrong
 * shape takes as long as a wrong PIN) and compares in constant time.
 */
export async function verifyPin(pin: string, hash: ParsedPinHash): Promise<boolean> {
  const key = await derive(pin.slice(0, 64), hash.salt, hash.params);
  return timingSafeEqual(key, hash.key) && PIN_PATTERN.test(pin);
}
