/**
 * Entitlement lists (issue 18): which member badges may take plan vends at which units, within which
 * allowances, until when. The fleet makes a list and signs it with the **entitlement key**, a minisign key
 * that can grant plan vends and nothing else; a unit's config names the entitlement public key, so a
 * config or release key's signature is refused (another key id), and so is a bundle's signature (its
 * trusted comment lacks the entitlements purpose).
 *
 * On the wire and on disk a list is two texts: `document` (the list as JSON, exactly the bytes signed) and
 * `signature` (a minisign `.minisig`, prehashed Ed25519). The trusted comment is
 * `vendd-entitlements v1 issued:<ms> valid-until:<ms> sha256:<hex of document>`.
 *
 * A badge appears only as {@link badgeHash}: scrypt of the card's normalised UID with the fleet's badge salt
 * (stable for a fleet, carried in the list), so neither the list, the journal nor the fleet holds a UID.
 */
import { createHash, scrypt, scryptSync } from "node:crypto";
import * as z from "zod";
import {
  formatSignature,
  MinisignError,
  type PublicKey,
  parseSignature,
  type SecretKey,
  signData,
  verifySignature,
} from "./minisign.js";

export const ENTITLEMENTS_PURPOSE = "vendd-entitlements v1";

const minor = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const epochMs = z.number().int().nonnegative().max(8.64e15);
const id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/);

/** An allowance: at most `items` vends and/or at most `amount` minor units; null = no limit of that kind. */
export const Allowance = z.strictObject({
  items: z.number().int().nonnegative().nullable(),
  amount: minor.nullable(),
});
export type Allowance = z.infer<typeof Allowance>;

export const EntitlementMember = z.strictObject({
  /** {@link badgeHash} of the member's badge. */
  badge: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  memberId: id,
  planId: id,
  /** The member's plan is valid in [validFrom, validTo) (ms); suspended members are simply absent. */
  validFrom: epochMs,
  validTo: epochMs,
  perDay: Allowance,
  perMonth: Allowance,
  /** Unit ids where the plan is valid, or `["*"]` for every unit of the fleet. */
  units: z.array(z.string().min(1).max(64)).min(1).max(10_000),
});
export type EntitlementMember = z.infer<typeof EntitlementMember>;

export const EntitlementList = z.strictObject({
  version: z.literal(1),
  /** Monotonic per fleet: a unit never replaces a list with an older one. */
  serial: z.number().int().positive(),
  issuedAt: epochMs,
  /** After this instant the list is not used: members fall back to the normal payment flow. */
  validUntil: epochMs,
  /** base64url salt of every badge hash in this fleet. */
  badgeSalt: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  /** IANA time zone in which days and months of the allowances are counted. */
  timeZone: z.string().min(1).max(64),
  members: z.array(EntitlementMember).max(100_000),
});
export type EntitlementList = z.infer<typeof EntitlementList>;

export type EntitlementErrorCode =
  | "malformed"
  | "signature"
  | "wrongKey"
  | "purpose"
  | "expired"
  | "notYetValid";

export class EntitlementError extends Error {
  constructor(
    readonly code: EntitlementErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** scrypt parameters of badge hashes: about 30 ms on a Raspberry Pi 4 per tap, costly to brute-force. */
const BADGE_SCRYPT = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/**
 * The only form in which a member's badge leaves the reader: scrypt of the normalised UID in upper-case hex
 * (drivers/nfc/badges.ts `normaliseUid` gives lower case: upper-case it first) with the fleet's badge salt,
 * base64url (43 characters).
 */
export function badgeHash(normalisedUid: string, badgeSalt: string): string {
  if (!/^[0-9A-F]{8,20}$/.test(normalisedUid))
    throw new EntitlementError("malformed", "not a normalised badge UID");
  return scryptSync(normalisedUid, Buffer.from(badgeSalt, "base64url"), 32, BADGE_SCRYPT).toString(
    "base64url",
  );
}

/**
 * {@link badgeHash} on the thread pool: the same hash, without blocking the event loop for the scrypt
 * (the unit's VMC line keeps being served during a tap).
 */
export function badgeHashAsync(normalisedUid: string, badgeSalt: string): Promise<string> {
  if (!/^[0-9A-F]{8,20}$/.test(normalisedUid))
    return Promise.reject(new EntitlementError("malformed", "not a normalised badge UID"));
  return new Promise((resolve, reject) => {
    scrypt(normalisedUid, Buffer.from(badgeSalt, "base64url"), 32, BADGE_SCRYPT, (err, key) => {
      if (err) reject(err);
      else resolve(key.toString("base64url"));
    });
  });
}

function trustedComment(list: EntitlementList, document: string): string {
  const sha = createHash("sha256").update(document).digest("hex");
  return `${ENTITLEMENTS_PURPOSE} issued:${list.issuedAt} valid-until:${list.validUntil} sha256:${sha}`;
}

/** Serialises and signs a list with the entitlement secret key. */
export function signEntitlements(
  list: EntitlementList,
  key: SecretKey,
): { document: string; signature: string } {
  const parsed = EntitlementList.parse(list);
  const document = JSON.stringify(parsed);
  const sig = signData(
    Buffer.from(document),
    key,
    trustedComment(parsed, document),
    "vendd entitlement list",
  );
  return { document, signature: formatSignature(sig) };
}

/**
 * Verifies a list for use at `now`: signed by `pk` (the config's entitlement key), with the entitlements
 * purpose, its document exactly the one signed, well-formed, and `now` before `validUntil`. Throws
 * {@link EntitlementError} with a specific code; returns the list otherwise.
 */
export function verifyEntitlements(
  document: string,
  signature: string,
  pk: PublicKey,
  now: number,
): EntitlementList {
  let sig: ReturnType<typeof parseSignature>;
  try {
    sig = parseSignature(signature);
  } catch (err) {
    throw new EntitlementError("malformed", `the signature is unreadable: ${(err as Error).message}`);
  }
  try {
    verifySignature(Buffer.from(document), sig, pk);
  } catch (err) {
    if (err instanceof MinisignError && err.code === "unknown_key")
      throw new EntitlementError(
        "wrongKey",
        `the list is not signed by the entitlement key (${err.message})`,
      );
    throw new EntitlementError("signature", "the list does not match its signature");
  }
  if (!sig.trustedComment.startsWith(`${ENTITLEMENTS_PURPOSE} `))
    throw new EntitlementError("purpose", "the signature is not an entitlement list's");
  let json: unknown;
  try {
    json = JSON.parse(document);
  } catch {
    throw new EntitlementError("malformed", "the list is not JSON");
  }
  const r = EntitlementList.safeParse(json);
  if (!r.success)
    throw new EntitlementError("malformed", `the list is malformed: ${r.error.issues[0]?.message ?? ""}`);
  const list = r.data;
  if (sig.trustedComment !== trustedComment(list, document))
    throw new EntitlementError("signature", "the trusted comment does not describe this list");
  if (now >= list.validUntil) throw new EntitlementError("expired", "the entitlement list has expired");
  if (now < list.issuedAt - 5 * 60_000)
    throw new EntitlementError("notYetValid", "the entitlement list is from the future");
  return list;
}
