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
import { createHash, sign as edSign, verify as edVerify } from "node:crypto";
import {
  base64Strict,
  keyIdHex,
  lines,
  MinisignError,
  type PublicKey,
  privateKeyObject,
  type SecretKey,
  type Signature,
  TRUSTED,
  TRUSTED_COMMENT_MAX,
  UNTRUSTED,
} from "./minisignFormat.js";

export {
  formatPublicKey,
  KDF_INTERACTIVE,
  KDF_SENSITIVE,
  type KdfLimits,
  keyIdHex,
  MinisignError,
  type MinisignErrorCode,
  type PublicKey,
  parsePublicKey,
  publicKeyLine,
  type SecretKey,
  type Signature,
  TRUSTED_COMMENT_MAX,
} from "./minisignFormat.js";
export {
  decryptSecretKey,
  type GeneratedKeys,
  generateKeys,
  scryptParams,
  secretKeyEncrypted,
} from "./minisignSecretKey.js";

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
