/**
 * The minisign formats (reliability.md §4.1), read and written with Node's own crypto so that files made
 * here verify with the `minisign` tool and the other way round:
 *
 * - public key: `untrusted comment: …` + Base64 of `Ed` ‖ key id (8) ‖ Ed25519 public key (32);
 * - signature: `untrusted comment: …`, Base64 of `ED` ‖ key id ‖ Ed25519 signature of the BLAKE2b-512 of
 *   the file (`Ed`, the legacy form, signs the file itself), `trusted comment: <text>`, and Base64 of the
 *   global signature over signature ‖ text;
 * - secret key: `Ed` `Sc` `B2` ‖ salt (32) ‖ opslimit (u64 LE) ‖ memlimit (u64 LE) ‖ 104 bytes of key id ‖
 *   libsodium secret key (seed ‖ public key) ‖ BLAKE2b-256 checksum of `Ed` ‖ key id ‖ secret key, XORed
 *   with a scrypt stream from the passphrase (libsodium `crypto_pwhash_scryptsalsa208sha256`, whose
 *   opslimit/memlimit map to scrypt's N, r, p by `scryptParams`). A key without a passphrase (`minisign -W`)
 *   has the KDF field zero and is stored in the clear.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign as edSign,
  verify as edVerify,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  scrypt,
} from "node:crypto";
import { blake2b } from "@noble/hashes/blake2b";

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

const UNTRUSTED = "untrusted comment: ";
const TRUSTED = "trusted comment: ";
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

function base64Strict(text: string, what: string, code: MinisignErrorCode): Buffer {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) || t.length % 4 !== 0) {
    throw new MinisignError(code, `${what} is not Base64`);
  }
  return Buffer.from(t, "base64");
}

function lines(text: string): string[] {
  return text.replace(/\r\n/g, "\n").split("\n");
}

function publicKeyObject(raw: Buffer): KeyObject {
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

/** Reads a `.minisig` file: four lines, the trusted comment within minisign's limit. */
export function parseSignature(text: string): Signature {
  const ls = lines(text);
  if (ls.length < 4 || (ls.length > 4 && ls.slice(4).some((l) => l !== ""))) {
    throw new MinisignError("malformed_signature", "a signature file has exactly four lines");
  }
  const [l0 = "", l1 = "", l2 = "", l3 = ""] = ls;
  if (!l0.startsWith(UNTRUSTED)) {
    throw new MinisignError("malformed_signature", "line 1 of the signature is not an untrusted comment");
  }
  const sig = base64Strict(l1, "the signature line", "malformed_signature");
  if (sig.length !== 74)
    throw new MinisignError("malformed_signature", `the signature is ${sig.length} bytes, not 74`);
  const alg = sig.subarray(0, 2).toString("latin1");
  if (alg !== "ED" && alg !== "Ed") {
    throw new MinisignError("malformed_signature", "the signature algorithm is neither ED nor Ed");
  }
  if (!l2.startsWith(TRUSTED)) {
    throw new MinisignError("bad_trusted_comment", "line 3 of the signature is not a trusted comment");
  }
  const trustedComment = l2.slice(TRUSTED.length);
  if (Buffer.byteLength(trustedComment) > TRUSTED_COMMENT_MAX) {
    throw new MinisignError("bad_trusted_comment", "the trusted comment is longer than minisign allows");
  }
  const globalSignature = base64Strict(l3, "the global signature", "bad_trusted_comment");
  if (globalSignature.length !== 64) {
    throw new MinisignError(
      "bad_trusted_comment",
      `the global signature is ${globalSignature.length} bytes, not 64`,
    );
  }
  return {
    algorithm: alg,
    keyId: Buffer.from(sig.subarray(2, 10)),
    signature: Buffer.from(sig.subarray(10, 74)),
    trustedComment,
    globalSignature,
    untrustedComment: l0.slice(UNTRUSTED.length),
  };
}

/** The `.minisig` text of a signature. */
export function formatSignature(s: Signature): string {
  const sig = Buffer.concat([Buffer.from(s.algorithm, "latin1"), s.keyId, s.signature]).toString("base64");
  return `${UNTRUSTED}${s.untrustedComment}\n${sig}\n${TRUSTED}${s.trustedComment}\n${s.globalSignature.toString("base64")}\n`;
}

/** BLAKE2b-512 of a file's content: what an `ED` signature signs. */
export function prehash(data: Uint8Array): Buffer {
  return createHash("blake2b512").update(data).digest();
}

/**
 * Checks `sig` over `data` with `pk`, the file signature and then the global signature over the trusted
 * comment. Throws `MinisignError`: `unknown_key` when the key ids differ, `bad_signature` when the file
 * does not match, `bad_trusted_comment` when the comment was changed.
 */
export function verifySignature(data: Uint8Array, sig: Signature, pk: PublicKey): void {
  if (!sig.keyId.equals(pk.keyId)) {
    throw new MinisignError(
      "unknown_key",
      `signed with key ${keyIdHex(sig.keyId)}, not with key ${keyIdHex(pk.keyId)}`,
    );
  }
  const message = sig.algorithm === "ED" ? prehash(data) : data;
  if (!edVerify(null, message, pk.key, sig.signature)) {
    throw new MinisignError("bad_signature", "the signature does not match the file");
  }
  verifyTrustedComment(sig, pk);
}

/** The global signature check alone: the trusted comment is the one the key holder signed. */
export function verifyTrustedComment(sig: Signature, pk: PublicKey): void {
  const signed = Buffer.concat([sig.signature, Buffer.from(sig.trustedComment, "utf8")]);
  if (!edVerify(null, signed, pk.key, sig.globalSignature)) {
    throw new MinisignError("bad_trusted_comment", "the trusted comment was changed after signing");
  }
}

/** Signs `data` in the prehashed (`ED`) form, as `minisign -S` does by default. */
export function signData(
  data: Uint8Array,
  sk: SecretKey,
  trustedComment: string,
  untrustedComment = "signature from vendd secret key",
): Signature {
  if (/[\r\n]/.test(trustedComment) || /[\r\n]/.test(untrustedComment)) {
    throw new MinisignError("bad_trusted_comment", "a comment is one line");
  }
  if (Buffer.byteLength(trustedComment) > TRUSTED_COMMENT_MAX) {
    throw new MinisignError("bad_trusted_comment", "the trusted comment is longer than minisign allows");
  }
  const key = privateKeyObject(sk);
  const signature = edSign(null, prehash(data), key);
  const globalSignature = edSign(null, Buffer.concat([signature, Buffer.from(trustedComment, "utf8")]), key);
  return { algorithm: "ED", keyId: sk.keyId, signature, trustedComment, globalSignature, untrustedComment };
}

function privateKeyObject(sk: SecretKey): KeyObject {
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

/**
 * Reads a secret key file and decrypts it with `passphrase` (ignored for a key stored without one).
 * Throws `wrong_passphrase` when the checksum does not match after decryption.
 */
export async function decryptSecretKey(text: string, passphrase: string): Promise<SecretKey> {
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
  const kdfAlg = bytes.subarray(2, 4);
  const chkAlg = bytes.subarray(4, 6).toString("latin1");
  if (sigAlg !== "Ed" || chkAlg !== "B2") {
    throw new MinisignError("malformed_secret_key", "not an Ed25519 minisign secret key (Ed/B2)");
  }
  const salt = bytes.subarray(6, 38);
  const limits = {
    opslimit: Number(bytes.readBigUInt64LE(38)),
    memlimit: Number(bytes.readBigUInt64LE(46)),
  };
  const record = Buffer.from(bytes.subarray(54, 158));
  if (kdfAlg.toString("latin1") === "Sc") {
    const stream = await kdfStream(passphrase, salt, limits);
    for (let i = 0; i < record.length; i++) record[i] = (record[i] ?? 0) ^ (stream[i] ?? 0);
  } else if (!kdfAlg.equals(Buffer.alloc(2))) {
    throw new MinisignError("malformed_secret_key", "unknown key derivation (neither Sc nor none)");
  }
  const keyId = Buffer.from(record.subarray(0, 8));
  const sk64 = Buffer.from(record.subarray(8, 72));
  if (!checksum(keyId, sk64).equals(record.subarray(72, 104))) {
    throw new MinisignError(
      "wrong_passphrase",
      "wrong passphrase (the secret key's checksum does not match)",
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
