import {
  createScryptHash,
  parseScryptHash,
  SCRYPT_HASH_FORMAT,
  type ScryptHash,
  verifyScryptHash,
} from "./scryptHash.js";

/**
 * The technician console PIN. Configuration holds only its scrypt hash (`vendd console hash-pin` makes it)
 * in the one scrypt hash format of src/core/scryptHash.ts, the same as the badge hashes. A PIN is 4 to 32
 * digits. PINs and their hashes are never logged.
 */
export const PIN_HASH_FORMAT = SCRYPT_HASH_FORMAT;

export const PIN_PATTERN = /^\d{4,32}$/;

export type ParsedPinHash = ScryptHash;

const FAULTS = {
  format: "must be scrypt$N$r$p$salt$key (from `vendd console hash-pin`)",
  params: "scrypt parameters out of range (N a power of two 1024..1048576, r 1..16, p 1..4)",
  key: "key must be 32 bytes",
} as const;

/** The hash's parts, or a message saying what is wrong with it (never the hash itself). */
export function parsePinHash(hash: string): ParsedPinHash | string {
  const parsed = parseScryptHash(hash);
  return typeof parsed === "string" ? FAULTS[parsed] : parsed;
}

/** The configuration string for a PIN. `cost` is scrypt's N. */
export async function hashPin(pin: string, cost = 16_384): Promise<string> {
  if (!PIN_PATTERN.test(pin)) throw new Error("a PIN is 4 to 32 digits");
  const hash = await createScryptHash(pin, cost);
  if (hash === null) throw new Error(FAULTS.params);
  return hash;
}

/**
 * Whether `pin` matches the parsed hash: always derives (also for input that is not a PIN, so a wrong
 * shape takes as long as a wrong PIN) and compares in constant time.
 */
export async function verifyPin(pin: string, hash: ParsedPinHash): Promise<boolean> {
  return (await verifyScryptHash(pin.slice(0, 64), hash)) && PIN_PATTERN.test(pin);
}
