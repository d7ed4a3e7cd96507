/**
 * The shared pieces of the minisign formats (minisign.ts describes them): the key and signature types, the
 * refusal with its reason codes, the KDF limits, the line and Base64 helpers, and the public key file
 * (`Ed` ‖ key id ‖ Ed25519 public key) read and written.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";

export type MinisignErrorCode =
  | "malformed_public_key"
  | "malformed_secret_key"
  | "malformed_signature"
  | "wrong_passphrase"
  | "unknown_key"
  | "bad_signature"
  | "bad_trusted_comment";

/** A refusal with a specific reason (`code`) for each way a key or signature can be wrong. */
export class MinisignError extends Error {
  override readonly name = "MinisignError";
  constructor(
    readonly code: MinisignErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface PublicKey {
  /** 8 bytes, in file order. */
  keyId: Buffer;
  /** The raw 32-byte Ed25519 public key. */
  raw: Buffer;
  key: KeyObject;
}

export interface SecretKey {
  keyId: Buffer;
  /** The 32-byte Ed25519 seed. */
  seed: Buffer;
  publicKey: PublicKey;
}

export interface Signature {
  /** `ED`: signs the BLAKE2b-512 of the file (minisign's default); `Ed`: the legacy form, the file itself. */
  algorithm: "ED" | "Ed";
  keyId: Buffer;
  signature: Buffer;
  trustedComment: string;
  globalSignature: Buffer;
  untrustedComment: string;
}

/** The scrypt cost a key file records: libsodium's opslimit and memlimit. */
export interface KdfLimits {
  opslimit: number;
  memlimit: number;
}

/** libsodium's `..._OPSLIMIT_SENSITIVE`/`MEMLIMIT_SENSITIVE`: what `minisign -G` writes (N=2^20, 1 GiB). */
export const KDF_SENSITIVE: KdfLimits = { opslimit: 33_554_432, memlimit: 1_073_741_824 };
/** libsodium's `..._INTERACTIVE` limits (N=2^14, 16 MiB): for short-lived keys and tests. */
export const KDF_INTERACTIVE: KdfLimits = { opslimit: 524_288, memlimit: 16_777_216 };

export const UNTRUSTED = "untrusted comment: ";
export const TRUSTED = "trusted comment: ";
/** minisign's limit on a comment line (`TRUSTEDCOMMENTMAXBYTES` 8192, `COMMENTMAXBYTES` 1024). */
export const TRUSTED_COMMENT_MAX = 8191;

/** The key id as minisign prints it: 16 hex digits, bytes in reverse order. */
export function keyIdHex(keyId: Buffer): string {
  // As minisign prints it ("%" PRIX64 of the little-endian id): upper case, no leading zeros.
  return Buffer.from(keyId)
    .reverse()
    .toString("hex")
    .toUpperCase()
    .replace(/^0+(?=.)/, "");
}

export function base64Strict(text: string, what: string, code: MinisignErrorCode): Buffer {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) || t.length % 4 !== 0) {
    throw new MinisignError(code, `${what} is not Base64`);
  }
  return Buffer.from(t, "base64");
}

export function lines(text: string): string[] {
  return text.replace(/\r\n/g, "\n").split("\n");
}

export function publicKeyObject(raw: Buffer): KeyObject {
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
    format: "jwk",
  });
}

/**
 * Reads a public key: a minisign `.pub` file (comment line + key line) or the bare Base64 key line (the
 * form `minisign -P` takes and the config's `updates.publicKeys` holds).
 */
export function parsePublicKey(text: string): PublicKey {
  const ls = lines(text.trim()).filter((l) => l.trim() !== "");
  const keyLine =
    ls.length === 2 && ls[0]?.startsWith(UNTRUSTED) ? ls[1] : ls.length === 1 ? ls[0] : undefined;
  if (keyLine === undefined) {
    throw new MinisignError(
      "malformed_public_key",
      "a public key is one Base64 line, optionally after a comment line",
    );
  }
  const bytes = base64Strict(keyLine, "the public key", "malformed_public_key");
  if (bytes.length !== 42) {
    throw new MinisignError("malformed_public_key", `the public key is ${bytes.length} bytes, not 42`);
  }
  if (bytes.subarray(0, 2).toString("latin1") !== "Ed") {
    throw new MinisignError("malformed_public_key", "the public key is not an Ed25519 (Ed) key");
  }
  const raw = Buffer.from(bytes.subarray(10, 42));
  return { keyId: Buffer.from(bytes.subarray(2, 10)), raw, key: publicKeyObject(raw) };
}

/** The Base64 key line of a public key (what `updates.publicKeys` lists). */
export function publicKeyLine(pk: PublicKey): string {
  return Buffer.concat([Buffer.from("Ed", "latin1"), pk.keyId, pk.raw]).toString("base64");
}

/** A public key file as `minisign -G` writes it. */
export function formatPublicKey(pk: PublicKey): string {
  return `${UNTRUSTED}minisign public key ${keyIdHex(pk.keyId)}\n${publicKeyLine(pk)}\n`;
}

export function privateKeyObject(sk: SecretKey): KeyObject {
  return createPrivateKey({
    key: {
      kty: "OKP",
      crv: "Ed25519",
      x: sk.publicKey.raw.toString("base64url"),
      d: sk.seed.toString("base64url"),
    },
    format: "jwk",
  });
}
