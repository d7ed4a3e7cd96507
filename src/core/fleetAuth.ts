/**
 * A unit's identity towards the fleet: its own Ed25519 key pair (made at install by `vendd fleet enroll`),
 * and requests signed with it. The fleet knows a unit by its public key and keeps no secret that could
 * sign as the unit. Node's crypto does the Ed25519, and libsodium (the optional `sodium-native`) checks the
 * signatures the fleet receives where it is installed, in about half the CPU time ({@link ed25519Checker});
 * nothing here is hand-rolled cryptography.
 *
 * A signed request carries four headers:
 * - `x-vendd-key`: the unit's public key, 32 raw bytes in base64url;
 * - `x-vendd-timestamp`: epoch milliseconds, decimal;
 * - `x-vendd-nonce`: 16 random bytes in base64url (22 characters);
 * - `x-vendd-signature`: Ed25519 over {@link canonicalRequest}, base64url.
 * The fleet refuses a timestamp further than {@link MAX_SKEW_MS} from its clock, and a (key, nonce) it has
 * seen within that window: a captured request cannot be replayed, and a body cannot be swapped.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import { createRequire } from "node:module";

export const KEY_HEADER = "x-vendd-key";
export const TIMESTAMP_HEADER = "x-vendd-timestamp";
export const NONCE_HEADER = "x-vendd-nonce";
export const SIGNATURE_HEADER = "x-vendd-signature";

/** Largest difference between a request's timestamp and the fleet's clock, ms. */
export const MAX_SKEW_MS = 5 * 60_000;

const B64URL = /^[A-Za-z0-9_-]+$/;
/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export interface UnitKeyPair {
  privateKey: KeyObject;
  /** The raw public key, base64url (43 characters). */
  publicKey: string;
}

/** A new key pair; `privatePem` is what the unit keeps (PKCS#8 PEM, file mode 0600). */
export function generateUnitKey(): UnitKeyPair & { privatePem: string } {
  const { privateKey } = generateKeyPairSync("ed25519");
  const privatePem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  return { privateKey, publicKey: publicKeyOf(privateKey), privatePem };
}

/** Loads a PKCS#8 PEM Ed25519 private key; throws a specific error for any other kind of key. */
export function loadUnitKey(pem: string): UnitKeyPair {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw new Error("the unit key file is not a PEM private key");
  }
  if (privateKey.asymmetricKeyType !== "ed25519")
    throw new Error(`the unit key must be Ed25519, not ${privateKey.asymmetricKeyType ?? "unknown"}`);
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

function publicKeyOf(privateKey: KeyObject): string {
  const der = createPublicKey(privateKey).export({ type: "spki", format: "der" });
  return der.subarray(SPKI_PREFIX.length).toString("base64url");
}

/** The one function of libsodium used here (`sodium-native`'s binding of crypto_sign_verify_detached). */
interface Sodium {
  crypto_sign_verify_detached(signature: Buffer, message: Buffer, publicKey: Buffer): boolean;
}

function isSodium(m: unknown): m is Sodium {
  return (
    typeof m === "object" &&
    m !== null &&
    typeof (m as { crypto_sign_verify_detached?: unknown }).crypto_sign_verify_detached === "function"
  );
}

let sodium: Sodium | null | undefined;

/**
 * What checks the Ed25519 signatures of requests: `libsodium` when the optional `sodium-native` loads
 * (prebuilt for linux-x64 and linux-arm64), else `node` (node:crypto, OpenSSL). Measured on the 2-vCPU
 * development VM: 61 µs of CPU a check with libsodium, 122-143 µs with node:crypto, on every unit request a
 * fleet serves. For the keys units make both give the same answer (fleetAuth.test.ts); libsodium also refuses
 * small-order public keys, for which OpenSSL accepts a forged signature. VENDD_ED25519=node keeps node:crypto.
 */
export function ed25519Checker(): "libsodium" | "node" {
  if (sodium === undefined) {
    sodium = null;
    if (process.env.VENDD_ED25519 !== "node") {
      try {
        const m: unknown = createRequire(import.meta.url)("sodium-native");
        if (isSodium(m)) sodium = m;
      } catch {
        // Not installed, or no prebuilt binary for this platform: node:crypto checks instead.
      }
    }
  }
  return sodium === null ? "node" : "libsodium";
}

/**
 * Ed25519 of `data` by the unit key `raw` (base64url; `key` is it parsed by {@link publicKeyFromRaw}), checked
 * by `via` (the {@link ed25519Checker}'s choice unless given; `libsodium` throws where it is not loaded).
 */
export function verifyEd25519(
  data: Buffer,
  signature: Buffer,
  raw: string,
  key: KeyObject,
  via: "libsodium" | "node" = ed25519Checker(),
): boolean {
  if (via === "node") return verify(null, data, key, signature);
  ed25519Checker();
  if (!sodium) throw new Error("libsodium (sodium-native) is not loaded");
  return sodium.crypto_sign_verify_detached(signature, data, Buffer.from(raw, "base64url"));
}

/** Parsed keys of recent requests: a fleet verifies the same 10,000 keys over and over. Bounded. */
export const KEY_CACHE_MAX = 20_000;
const keyCache = new Map<string, KeyObject>();

/** Parses a raw base64url public key; null when it is not 32 bytes of base64url. */
export function publicKeyFromRaw(raw: string): KeyObject | null {
  if (raw.length !== 43 || !B64URL.test(raw)) return null;
  const cached = keyCache.get(raw);
  if (cached !== undefined) return cached;
  const bytes = Buffer.from(raw, "base64url");
  if (bytes.length !== 32) return null;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, bytes]), format: "der", type: "spki" });
  } catch {
    return null;
  }
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(raw, key);
  return key;
}

const BASE32 = "ABCDEFGHJKMNPQRSTVWXYZ0123456789"; // no I, L, O, U: nothing to misread aloud
/**
 * A short fingerprint of a public key to read out over the phone: 16 characters of SHA-256 in four groups
 * (`K7QM-3XPA-…`), 80 bits.
 */
export function fingerprint(publicKey: string): string {
  const digest = createHash("sha256").update(Buffer.from(publicKey, "base64url")).digest();
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 16) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length >= 16) break;
  }
  return out.match(/.{4}/g)?.join("-") ?? out;
}

/** The bytes a signature covers: method, path with query, timestamp, nonce and the body's SHA-256. */
export function canonicalRequest(
  method: string,
  path: string,
  timestamp: string,
  nonce: string,
  body: Uint8Array | string,
): Buffer {
  const bodyHash = createHash("sha256").update(body).digest("hex");
  return Buffer.from(["vendd-fleet-v1", method.toUpperCase(), path, timestamp, nonce, bodyHash].join("\n"));
}

/** The four headers that sign one request. */
export function signRequest(
  key: UnitKeyPair,
  method: string,
  path: string,
  body: Uint8Array | string,
  now: number,
): Record<string, string> {
  const timestamp = String(Math.trunc(now));
  const nonce = randomBytes(16).toString("base64url");
  const signature = sign(null, canonicalRequest(method, path, timestamp, nonce, body), key.privateKey);
  return {
    [KEY_HEADER]: key.publicKey,
    [TIMESTAMP_HEADER]: timestamp,
    [NONCE_HEADER]: nonce,
    [SIGNATURE_HEADER]: signature.toString("base64url"),
  };
}

export type VerifyResult =
  | { ok: true; publicKey: string; nonce: string; timestamp: number }
  | { ok: false; code: "unsigned" | "malformed" | "skew" | "signature"; message: string };

function header(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = headers[name];
  return typeof v === "string" ? v : null;
}

type Checked =
  | Extract<VerifyResult, { ok: false }>
  | {
      ok: true;
      publicKey: string;
      nonce: string;
      timestamp: number;
      key: KeyObject;
      data: Buffer;
      signature: Buffer;
    };

/** Everything but the signature itself: the headers' forms, the key, the clock skew. */
function checkRequest(
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: Uint8Array | string,
  now: number,
  maxSkewMs: number,
): Checked {
  const raw = header(headers, KEY_HEADER);
  const ts = header(headers, TIMESTAMP_HEADER);
  const nonce = header(headers, NONCE_HEADER);
  const sig = header(headers, SIGNATURE_HEADER);
  if (raw === null || ts === null || nonce === null || sig === null)
    return { ok: false, code: "unsigned", message: "the request is not signed by a unit key" };
  const key = publicKeyFromRaw(raw);
  if (key === null) return { ok: false, code: "malformed", message: "x-vendd-key is not an Ed25519 key" };
  if (!/^\d{1,16}$/.test(ts))
    return { ok: false, code: "malformed", message: "x-vendd-timestamp is not epoch milliseconds" };
  if (nonce.length !== 22 || !B64URL.test(nonce))
    return { ok: false, code: "malformed", message: "x-vendd-nonce is not 16 bytes of base64url" };
  if (sig.length !== 86 || !B64URL.test(sig))
    return { ok: false, code: "malformed", message: "x-vendd-signature is not an Ed25519 signature" };
  const timestamp = Number(ts);
  if (Math.abs(timestamp - now) > maxSkewMs)
    return { ok: false, code: "skew", message: "the request's timestamp is too far from the fleet's clock" };
  return {
    ok: true,
    publicKey: raw,
    nonce,
    timestamp,
    key,
    data: canonicalRequest(method, path, ts, nonce, body),
    signature: Buffer.from(sig, "base64url"),
  };
}

const BAD_SIGNATURE = {
  ok: false,
  code: "signature",
  message: "the signature does not match the request",
} as const;

/**
 * Checks a request's signature and timestamp. Replays are the caller's to refuse: it must record
 * (publicKey, nonce) until `timestamp + MAX_SKEW_MS` and refuse one it has seen.
 */
export function verifyRequest(
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: Uint8Array | string,
  now: number,
  maxSkewMs = MAX_SKEW_MS,
): VerifyResult {
  const c = checkRequest(method, path, headers, body, now, maxSkewMs);
  if (!c.ok) return c;
  if (!verifyEd25519(c.data, c.signature, c.publicKey, c.key)) return BAD_SIGNATURE;
  return { ok: true, publicKey: c.publicKey, nonce: c.nonce, timestamp: c.timestamp };
}

/**
 * {@link verifyRequest} with the signature checked on libuv's thread pool (crypto.verify with a callback):
 * an Ed25519 verification costs about 0.2 ms of CPU, which a fleet serving 10,000 units would otherwise
 * spend on its one JavaScript thread for every request.
 */
export async function verifyRequestAsync(
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: Uint8Array | string,
  now: number,
  maxSkewMs = MAX_SKEW_MS,
): Promise<VerifyResult> {
  const c = checkRequest(method, path, headers, body, now, maxSkewMs);
  if (!c.ok) return c;
  const good = await new Promise<boolean>((resolve) =>
    verify(null, c.data, c.key, c.signature, (err, ok) => resolve(err === null && ok)),
  );
  if (!good) return BAD_SIGNATURE;
  return { ok: true, publicKey: c.publicKey, nonce: c.nonce, timestamp: c.timestamp };
}
