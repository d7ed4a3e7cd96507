import {
  createScryptHash,
  parseScryptHash,
  type ScryptHash,
  verifyScryptHash,
} from "../../src/core/scryptHash.js";
import { NfcError } from "./errors.js";

/**
 * Technician badges are recognised by UID, and configuration holds only scrypt hashes of the UIDs, so a
 * leaked config file does not give the UIDs needed to clone a badge. One string per badge, in the one scrypt
 * hash format of src/core/scryptHash.ts (`scrypt$<N>$<r>$<p>$<salt>$<key>`).
 * The UID is hashed as lower-case hex without separators (`04a1b2c3d4e5f6`). Hashes and UIDs are never
 * logged or put in error messages.
 */
export interface BadgeEntry {
  /** Who the badge belongs to, for the audit log (not secret). */
  name: string;
  hash: string;
}

interface Parsed extends ScryptHash {
  name: string;
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
  const hash = await createScryptHash(hex, cost);
  if (hash === null) throw new NfcError("config", "badge hash: scrypt parameters out of range");
  return hash;
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
      if ((await verifyScryptHash(hex, p)) && match === null) match = p.name;
    }
    return match;
  };
}

function parse(e: BadgeEntry, i: number): Parsed {
  const parsed = parseScryptHash(e.hash);
  if (parsed === "format")
    throw new NfcError("config", `badge ${i} (${e.name}): hash is not scrypt$N$r$p$salt$key`);
  if (parsed === "params")
    throw new NfcError("config", `badge ${i} (${e.name}): scrypt parameters out of range`);
  if (parsed === "key") throw new NfcError("config", `badge ${i} (${e.name}): key must be 32 bytes`);
  return { name: e.name, ...parsed };
}
