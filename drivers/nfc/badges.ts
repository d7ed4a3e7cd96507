import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import { NfcError } from "./errors.js";

/**
 * Technician badges are recognised by UID, and configuration holds only scrypt hashes of the UIDs, so a
 * leaked config file does not give the UIDs needed to clone a badge. Format (one string per badge):
 *   `scrypt$<N>$<r>$<p>$<salt, base64url>$<32-byte key, base64url>`
 * The UID is hashed as lower-case hex without separators (`04a1b2c3d4e5f6`). Hashes and UIDs are never
 * logged or put in error messages.
 */
export interface BadgeEntry {
  /** Who the badge belongs to, for the audit log (not secret). */
  name: string;
  hash: string;
}

const KEY_BYTES = 32;
const FORMAT = /^scrypt\$(\d{1,7})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{43})$/;

interface Parsed {
  name: string;
  salt: Buffer;
  key: Buffer;
  params: ScryptOptions;
}

/** Normalises a UID as nfc-pcsc reports it, or as typed: hex with optional `:`/space/`-` separators. */
export function normaliseUid(uid: string): string | null {
  const hex = uid.replace(/[\s:-]/g, "").toLowerCase();
  return /^(?:[0-9a-f]{2}){4,10}$/.test(hex) ? hex : null;
}

/** Creates the configuration string for a badge UID (for the technician tool). `cost` is scrypt's N. */
export async function hashBadgeUid(uid: string, cost = 16_384): Promise<string> {
  const hex = normaliseUid(uid);
  if (hex === null) throw new NfcError("config", "badge UID must be 4 to 10 bytes of hex");
  const salt = randomBytes(16);
  const params = checkParams(cost, 8, 1);
  const key = await derive(hex, salt, params);
  return `scrypt$${cost}$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/**
 * Returns a checker that tells which configured badge a UID belongs to (its name), or null. Every hash is
 * computed for every tap, so the time taken does not reveal which entry matched.
 * @throws NfcError `config` naming the entry (by index and name) whose hash is malformed.
 */
export function createBadgeCheck(entries: readonly BadgeEntry[]): (uid: string) => Promise<string | null> {
  const parsed = entries.map((e, i) => parse(e, i));
  return async (uid) => {
    const hex = normaliseUid(uid);
    if (hex === null) return null;
    let match: string | null = null;
    for (const p of parsed) {
      const key = await derive(hex, p.salt, p.params);
      if (timingSafeEqual(key, p.key) && match === null) match = p.name;
    }
    return match;
  };
}

function parse(e: BadgeEntry, i: number): Parsed {
  const m = FORMAT.exec(e.hash);
  if (!m) throw new NfcError("config", `badge ${i} (${e.name}): hash is not scrypt$N$r$p$salt$key`);
  const params = checkParams(Number(m[1]), Number(m[2]), Number(m[3]), `badge ${i} (${e.name})`);
  const key = Buffer.from(m[5] ?? "", "base64url");
  if (key.length !== KEY_BYTES) throw new NfcError("config", `badge ${i} (${e.name}): key must be 32 bytes`);
  return { name: e.name, salt: Buffer.from(m[4] ?? "", "base64url"), key, params };
}

function checkParams(N: number, r: number, p: number, where = "badge hash"): ScryptOptions {
  // N a power of two (scrypt), and bounded so one tap cannot take seconds or hundreds of MiB.
  if (N < 1024 || N > 1_048_576 || (N & (N - 1)) !== 0 || r < 1 || r > 16 || p < 1 || p > 4) {
    throw new NfcError("config", `${where}: scrypt parameters out of range`);
  }
  return { N, r, p, maxmem: 256 * N * r * p };
}

function derive(hex: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(hex, salt, KEY_BYTES, params, (err, key) => (err ? reject(err) : resolve(key)));
  });
}
