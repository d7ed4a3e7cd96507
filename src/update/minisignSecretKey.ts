/**
 * The minisign secret key file (minisign.ts describes the layout): its scrypt stream from the passphrase
 * (libsodium's opslimit/memlimit mapped to scrypt's N, r, p), its BLAKE2b-256 checksum, reading and
 * decrypting a key, and generating a new key pair.
 */

import { createPublicKey, generateKeyPairSync, randomBytes, scrypt } from "node:crypto";
import { readFile } from "node:fs/promises";
import { blake2b } from "@noble/hashes/blake2b";
import {
  base64Strict,
  formatPublicKey,
  KDF_SENSITIVE,
  type KdfLimits,
  lines,
  MinisignError,
  type PublicKey,
  privateKeyObject,
  publicKeyObject,
  type SecretKey,
  UNTRUSTED,
} from "./minisignFormat.js";

/**
 * libsodium's `pickparams`: how `crypto_pwhash_scryptsalsa208sha256` turns opslimit and memlimit into
 * scrypt's N (as log2), r and p. minisign stores the limits, so every reader must map them the same way.
 */
export function scryptParams(limits: KdfLimits): { N: number; r: number; p: number } {
  let ops = BigInt(limits.opslimit);
  const mem = BigInt(limits.memlimit);
  if (ops < 32768n) ops = 32768n;
  const r = 8n;
  let nLog2 = 1n;
  let p: bigint;
  if (ops < mem / 32n) {
    p = 1n;
    const maxN = ops / (r * 4n);
    for (nLog2 = 1n; nLog2 < 63n; nLog2++) if (1n << nLog2 > maxN / 2n) break;
  } else {
    const maxN = mem / (r * 128n);
    for (nLog2 = 1n; nLog2 < 63n; nLog2++) if (1n << nLog2 > maxN / 2n) break;
    let maxrp = ops / 4n / (1n << nLog2);
    if (maxrp > 0x3fffffffn) maxrp = 0x3fffffffn;
    p = maxrp / r;
  }
  return { N: 2 ** Number(nLog2), r: Number(r), p: Number(p) };
}

/** The 104-byte scrypt stream a passphrase-protected key is XORed with. */
function kdfStream(passphrase: string, salt: Buffer, limits: KdfLimits): Promise<Buffer> {
  const { N, r, p } = scryptParams(limits);
  if (p < 1)
    throw new MinisignError("malformed_secret_key", "the key's KDF limits give no valid scrypt cost");
  if (N > 2 ** 24)
    throw new MinisignError("malformed_secret_key", "the key's KDF memory limit is above 2 GiB");
  const maxmem = 128 * N * r + 128 * r * p + 16 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(Buffer.from(passphrase, "utf8"), salt, 104, { N, r, p, maxmem }, (err, key) =>
      err === null ? resolve(key) : reject(err),
    );
  });
}

/**
 * minisign's secret-key checksum: BLAKE2b-256 (libsodium `crypto_generichash`, 32 bytes), whose output
 * length is part of the parameter block, so Node's fixed-length `blake2b512` cannot make it.
 */
function checksum(keyId: Buffer, sk64: Buffer): Buffer {
  return Buffer.from(blake2b(Buffer.concat([Buffer.from("Ed", "latin1"), keyId, sk64]), { dkLen: 32 }));
}

/** A secret key file's bytes (158), checked to be an Ed25519 minisign key. */
function secretKeyBytes(text: string): Buffer {
  const ls = lines(text.trim()).filter((l) => l.trim() !== "");
  const keyLine = ls.length === 2 && ls[0]?.startsWith(UNTRUSTED) ? ls[1] : undefined;
  if (keyLine === undefined) {
    throw new MinisignError("malformed_secret_key", "a secret key file is a comment line and a Base64 line");
  }
  const bytes = base64Strict(keyLine, "the secret key", "malformed_secret_key");
  if (bytes.length !== 158) {
    throw new MinisignError("malformed_secret_key", `the secret key is ${bytes.length} bytes, not 158`);
  }
  const sigAlg = bytes.subarray(0, 2).toString("latin1");
  const chkAlg = bytes.subarray(4, 6).toString("latin1");
  if (sigAlg !== "Ed" || chkAlg !== "B2") {
    throw new MinisignError("malformed_secret_key", "not an Ed25519 minisign secret key (Ed/B2)");
  }
  const kdfAlg = bytes.subarray(2, 4);
  if (kdfAlg.toString("latin1") !== "Sc" && !kdfAlg.equals(Buffer.alloc(2))) {
    throw new MinisignError("malformed_secret_key", "unknown key derivation (neither Sc nor none)");
  }
  return bytes;
}

/**
 * Whether a secret key file is encrypted with a passphrase (`Sc`); `minisign -G -W` writes one without
 * (key derivation none), and such a key needs no passphrase.
 */
export function secretKeyEncrypted(text: string): boolean {
  return secretKeyBytes(text).subarray(2, 4).toString("latin1") === "Sc";
}

/**
 * Reads a secret key file and decrypts it with `passphrase` (ignored for a key stored without one).
 * Throws `wrong_passphrase` when the checksum does not match after decryption. A key stored without a
 * passphrase carries minisign's all-zero checksum (`minisign -G -W`) or the real one.
 */
export async function decryptSecretKey(text: string, passphrase: string): Promise<SecretKey> {
  const bytes = secretKeyBytes(text);
  const encrypted = bytes.subarray(2, 4).toString("latin1") === "Sc";
  const salt = bytes.subarray(6, 38);
  const limits = {
    opslimit: Number(bytes.readBigUInt64LE(38)),
    memlimit: Number(bytes.readBigUInt64LE(46)),
  };
  const record = Buffer.from(bytes.subarray(54, 158));
  if (encrypted) {
    const stream = await kdfStream(passphrase, salt, limits);
    for (let i = 0; i < record.length; i++) record[i] = (record[i] ?? 0) ^ (stream[i] ?? 0);
  }
  const keyId = Buffer.from(record.subarray(0, 8));
  const sk64 = Buffer.from(record.subarray(8, 72));
  const stored = record.subarray(72, 104);
  const unchecked = !encrypted && stored.equals(Buffer.alloc(32));
  if (!unchecked && !checksum(keyId, sk64).equals(stored)) {
    throw encrypted
      ? new MinisignError("wrong_passphrase", "wrong passphrase (the secret key's checksum does not match)")
      : new MinisignError(
          "malformed_secret_key",
          "the secret key's checksum does not match (damaged key file)",
        );
  }
  const seed = Buffer.from(sk64.subarray(0, 32));
  const raw = Buffer.from(sk64.subarray(32, 64));
  const sk: SecretKey = { keyId, seed, publicKey: { keyId, raw, key: publicKeyObject(raw) } };
  // A key whose public half does not belong to its seed would sign what no one can verify.
  const derived = createPublicKey(privateKeyObject(sk)).export({ format: "jwk" });
  if (derived.x !== raw.toString("base64url")) {
    throw new MinisignError("malformed_secret_key", "the secret key's public half does not match its seed");
  }
  return sk;
}

export interface GeneratedKeys {
  keyId: Buffer;
  publicKeyText: string;
  secretKeyText: string;
}

/**
 * A new key pair in minisign's files, the secret key encrypted with `passphrase` (scrypt with `limits`,
 * minisign's own `KDF_SENSITIVE` by default). An empty passphrase is refused: use a real one.
 */
export async function generateKeys(
  passphrase: string,
  limits: KdfLimits = KDF_SENSITIVE,
): Promise<GeneratedKeys> {
  if (passphrase === "") throw new MinisignError("wrong_passphrase", "the passphrase is empty");
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  if (typeof jwk.d !== "string" || typeof jwk.x !== "string") throw new Error("ed25519 key export failed");
  const seed = Buffer.from(jwk.d, "base64url");
  const raw = Buffer.from(jwk.x, "base64url");
  const keyId = randomBytes(8);
  const sk64 = Buffer.concat([seed, raw]);
  const record = Buffer.concat([keyId, sk64, checksum(keyId, sk64)]);
  const salt = randomBytes(32);
  const stream = await kdfStream(passphrase, salt, limits);
  for (let i = 0; i < record.length; i++) record[i] = (record[i] ?? 0) ^ (stream[i] ?? 0);
  const le = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    return b;
  };
  const bytes = Buffer.concat([
    Buffer.from("EdScB2", "latin1"),
    salt,
    le(limits.opslimit),
    le(limits.memlimit),
    record,
  ]);
  const pk: PublicKey = { keyId, raw, key: publicKeyObject(raw) };
  return {
    keyId,
    publicKeyText: formatPublicKey(pk),
    secretKeyText: `${UNTRUSTED}minisign encrypted secret key\n${bytes.toString("base64")}\n`,
  };
}

/**
 * Opens an encrypted secret key file with the passphrase in another file (one trailing newline dropped): the
 * fleet's signing keys (entitlement lists, unit values). Errors name the files, never their content.
 */
export async function openSecretKeyFile(
  keyFile: string,
  passphraseFile: string,
  what: string,
): Promise<SecretKey> {
  const [text, pass] = await Promise.all([readFile(keyFile, "utf8"), readFile(passphraseFile, "utf8")]);
  try {
    return await decryptSecretKey(text, pass.replace(/\r?\n$/, ""));
  } catch {
    throw new Error(`cannot open the ${what} ${keyFile} with the passphrase in ${passphraseFile}`);
  }
}
