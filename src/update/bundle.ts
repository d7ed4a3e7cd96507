/**
 * The bundle: one file, a ustar archive holding
 *
 * - `payload.tar`: what is signed, itself a tar of `manifest.json`, `config.yaml` and, for a release,
 *   `release.tar.gz` (the built app);
 * - `signatures/<n>.minisig`: one or more minisign signatures of `payload.tar`, each with the trusted
 *   comment `vendd-bundle/1 id=… kind=… version=… expires=… targets=…`.
 *
 * So a bundle travels as one file, and `tar -xf b.vbundle && minisign -Vm payload.tar -x
 * signatures/1.minisig -p key.pub` checks it with the standard tool. The trusted comment carries the
 * metadata (version, targets, expiry) under the global signature; the manifest inside the payload repeats
 * it with the digests of the parts, and the two must agree.
 */
import { createHash, randomBytes } from "node:crypto";
import { normaliseExpiry } from "./expiry.js";
import {
  keyIdHex,
  MinisignError,
  type PublicKey,
  parseSignature,
  type Signature,
  verifySignature,
  verifyTrustedComment,
} from "./minisign.js";
import { readTar, TarError, writeTar } from "./tar.js";

export const PAYLOAD_NAME = "payload.tar";
export const CONFIG_NAME = "config.yaml";
export const RELEASE_NAME = "release.tar.gz";
export const MANIFEST_NAME = "manifest.json";
const SIGNATURE_DIR = "signatures/";
const FORMAT = "vendd-bundle/1";

/** Largest bundle read (a release with its node_modules is tens of MiB). */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
/** Largest config inside a bundle: the config loader's own limit. */
export const MAX_CONFIG_BYTES = 1_048_576;

export type BundleErrorCode =
  | "not_a_bundle"
  | "truncated"
  | "unsigned"
  | "unknown_key"
  | "bad_signature"
  | "another_file"
  | "bad_trusted_comment"
  | "comment_mismatch"
  | "threshold"
  | "bad_request";

/** Why a bundle is refused; `code` is specific to the way it is wrong. */
export class BundleError extends Error {
  override readonly name = "BundleError";
  constructor(
    readonly code: BundleErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type BundleKind = "config" | "release";

/** What the trusted comment says, and the manifest repeats. */
export interface BundleMeta {
  /** 16 hex digits, random per bundle: ties a signature to its payload. */
  id: string;
  kind: BundleKind;
  /** The config version: a positive integer, compared with the unit's high-water mark. */
  version: number;
  /** Fleet names and unit ids this bundle is for. */
  targets: string[];
  /** ISO 8601 UTC, seconds: the bundle is refused from then on. */
  expires: string;
}

export interface Manifest extends BundleMeta {
  format: typeof FORMAT;
  configSha256: string;
  releaseSha256: string | null;
}

export interface BundleContents {
  manifest: Manifest;
  payload: Buffer;
  configBytes: Buffer;
  configText: string;
  release: Buffer | null;
  signatures: string[];
}

const TARGET = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The trusted comment of a bundle: one line, fixed key order. */
export function trustedCommentOf(meta: BundleMeta): string {
  return `${FORMAT} id=${meta.id} kind=${meta.kind} version=${meta.version} expires=${meta.expires} targets=${meta.targets.join(",")}`;
}

/** Reads a trusted comment written by `trustedCommentOf`; anything else is `bad_trusted_comment`. */
export function parseTrustedComment(text: string): BundleMeta {
  const m =
    /^vendd-bundle\/1 id=([0-9a-f]{16}) kind=(config|release) version=([1-9][0-9]{0,14}) expires=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) targets=(\S+)$/.exec(
      text,
    );
  if (m === null) {
    throw new BundleError(
      "bad_trusted_comment",
      "the trusted comment is not a vendd bundle description (vendd-bundle/1 id= kind= version= expires= targets=)",
    );
  }
  const [, id = "", kind = "", version = "", expires = "", targets = ""] = m;
  const list = targets.split(",");
  if (list.some((t) => !TARGET.test(t)) || Number.isNaN(Date.parse(expires))) {
    throw new BundleError("bad_trusted_comment", "the trusted comment has a malformed target list or expiry");
  }
  return {
    id,
    kind: kind === "release" ? "release" : "config",
    version: Number(version),
    targets: list,
    expires,
  };
}

export interface CreateInput {
  configText: string;
  release?: Buffer | null;
  version: number;
  targets: readonly string[];
  /** A day (end of that day UTC) or an ISO date-time (expiry.ts). */
  expires: string;
  /** Fixed only by tests; random otherwise. */
  id?: string;
}

/** An unsigned bundle (payload only). Sign it with `addSignature`. */
export function createBundle(input: CreateInput): { bundle: Buffer; manifest: Manifest } {
  if (!Number.isSafeInteger(input.version) || input.version < 1) {
    throw new BundleError("bad_request", "--version must be a positive integer");
  }
  if (input.targets.length === 0 || input.targets.some((t) => !TARGET.test(t))) {
    throw new BundleError("bad_request", "--targets takes fleet names or unit ids (letters, digits, . _ -)");
  }
  const config = Buffer.from(input.configText, "utf8");
  if (config.length > MAX_CONFIG_BYTES)
    throw new BundleError("bad_request", "the config is larger than 1 MiB");
  const release = input.release ?? null;
  const manifest: Manifest = {
    format: FORMAT,
    id: input.id ?? randomBytes(8).toString("hex"),
    kind: release === null ? "config" : "release",
    version: input.version,
    targets: [...new Set(input.targets)],
    expires: expiryOf(input.expires),
    configSha256: sha256(config),
    releaseSha256: release === null ? null : sha256(release),
  };
  const payload = writeTar([
    { name: MANIFEST_NAME, data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) },
    { name: CONFIG_NAME, data: config },
    ...(release === null ? [] : [{ name: RELEASE_NAME, data: release }]),
  ]);
  return { bundle: writeTar([{ name: PAYLOAD_NAME, data: payload }]), manifest };
}

function wrapTar<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof TarError) {
      throw new BundleError(
        err.code === "truncated" ? "truncated" : "not_a_bundle",
        `${what}: ${err.message}`,
      );
    }
    throw err;
  }
}

function parseManifest(data: Buffer): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(data.toString("utf8"));
  } catch {
    throw new BundleError("not_a_bundle", "the manifest is not JSON");
  }
  const r = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  const { format, id, kind, version, targets, expires, configSha256, releaseSha256 } = r;
  if (
    format !== FORMAT ||
    typeof id !== "string" ||
    (kind !== "config" && kind !== "release") ||
    typeof version !== "number" ||
    !Array.isArray(targets) ||
    !targets.every((t): t is string => typeof t === "string") ||
    typeof expires !== "string" ||
    typeof configSha256 !== "string" ||
    !(releaseSha256 === null || typeof releaseSha256 === "string")
  ) {
    throw new BundleError("not_a_bundle", `the manifest is not a ${FORMAT} manifest`);
  }
  return { format, id, kind, version, targets, expires, configSha256, releaseSha256 };
}

/** The parts of a bundle, unverified. Refuses what is not a whole bundle. */
export function readBundle(bundle: Buffer): BundleContents {
  const outer = wrapTar("bundle", () => readTar(bundle));
  const payloadEntry = outer[0];
  if (payloadEntry === undefined || payloadEntry.name !== PAYLOAD_NAME) {
    throw new BundleError("not_a_bundle", `a bundle starts with ${PAYLOAD_NAME}`);
  }
  const signatures: string[] = [];
  for (const e of outer.slice(1)) {
    if (!e.name.startsWith(SIGNATURE_DIR) || !e.name.endsWith(".minisig")) {
      throw new BundleError("not_a_bundle", `unexpected bundle entry ${JSON.stringify(e.name)}`);
    }
    signatures.push(e.data.toString("utf8"));
  }
  const inner = wrapTar("payload", () => readTar(payloadEntry.data));
  // Exactly the documented members, each once: anything else (`../x`, a duplicate) refuses the bundle.
  const allowed = [MANIFEST_NAME, CONFIG_NAME, RELEASE_NAME];
  const names = inner.map((e) => e.name);
  const odd = names.find((n, i) => !allowed.includes(n) || names.indexOf(n) !== i);
  if (odd !== undefined) {
    throw new BundleError(
      "not_a_bundle",
      `unexpected payload member ${JSON.stringify(odd.slice(0, 100))} (a payload holds ${allowed.join(", ")}, each once)`,
    );
  }
  const get = (name: string) => inner.find((e) => e.name === name)?.data;
  const manifestData = get(MANIFEST_NAME);
  const config = get(CONFIG_NAME);
  if (manifestData === undefined || config === undefined) {
    throw new BundleError("not_a_bundle", `the payload lacks ${MANIFEST_NAME} or ${CONFIG_NAME}`);
  }
  return {
    manifest: parseManifest(manifestData),
    payload: payloadEntry.data,
    configBytes: config,
    configText: config.toString("utf8"),
    release: get(RELEASE_NAME) ?? null,
    signatures,
  };
}

/** The bundle with one more signature (a `.minisig` text, from vendd or the `minisign` tool). */
export function addSignature(bundle: Buffer, signatureText: string): Buffer {
  const outer = wrapTar("bundle", () => readTar(bundle));
  const sig = parseSignature(signatureText);
  const existing = outer.slice(1).map((e) => parseSignature(e.data.toString("utf8")));
  if (existing.some((s) => s.keyId.equals(sig.keyId))) {
    throw new BundleError("bad_request", `the bundle is already signed with key ${keyIdHex(sig.keyId)}`);
  }
  return writeTar([
    ...outer,
    { name: `${SIGNATURE_DIR}${outer.length}.minisig`, data: Buffer.from(signatureText, "utf8") },
  ]);
}

export interface VerifyOptions {
  /** The unit's trusted keys (`updates.publicKeys`). */
  keys: readonly PublicKey[];
  /** Where the keys come from, as refusals name it (default `updates.publicKeys`). */
  keySource?: string;
  /** Distinct trusted keys a release bundle needs (`updates.threshold`); a config bundle needs one. */
  releaseThreshold: number;
}

export interface VerifiedBundle {
  meta: BundleMeta;
  configText: string;
  release: Buffer | null;
  /** Key ids (minisign's hex) whose signatures verified. */
  signers: string[];
}

function sameMeta(a: BundleMeta, b: BundleMeta): boolean {
  return (
    a.id === b.id &&
    a.kind === b.kind &&
    a.version === b.version &&
    a.expires === b.expires &&
    a.targets.join(",") === b.targets.join(",")
  );
}

/** Checks one signature; returns its metadata or throws a `BundleError` saying how it fails. */
function checkOne(
  contents: BundleContents,
  text: string,
  keys: readonly PublicKey[],
  keySource: string,
): { meta: BundleMeta; key: string } {
  let sig: Signature;
  try {
    sig = parseSignature(text);
  } catch (err) {
    if (err instanceof MinisignError)
      throw new BundleError("bad_signature", `a signature is malformed: ${err.message}`);
    throw err;
  }
  const key = keys.find((k) => k.keyId.equals(sig.keyId));
  if (key === undefined) {
    throw new BundleError(
      "unknown_key",
      `signed with key ${keyIdHex(sig.keyId)}, which is not in ${keySource}`,
    );
  }
  try {
    verifyTrustedComment(sig, key);
  } catch {
    throw new BundleError(
      "bad_trusted_comment",
      "the trusted comment was changed after signing (global signature fails)",
    );
  }
  const meta = parseTrustedComment(sig.trustedComment);
  if (meta.id !== contents.manifest.id) {
    throw new BundleError(
      "another_file",
      `the signature is for another bundle (id ${meta.id}), not this payload (id ${contents.manifest.id})`,
    );
  }
  try {
    verifySignature(contents.payload, sig, key);
  } catch {
    throw new BundleError(
      "bad_signature",
      "the payload was altered after signing (the signature does not match it)",
    );
  }
  if (!sameMeta(meta, contents.manifest)) {
    throw new BundleError(
      "comment_mismatch",
      "the signed trusted comment and the payload's manifest disagree",
    );
  }
  return { meta, key: keyIdHex(key.keyId) };
}

/**
 * Verifies a bundle against the unit's keys: each signature by a trusted key, its trusted comment, its tie
 * to this payload, the digests of the parts. A release needs `releaseThreshold` distinct keys. Throws a
 * `BundleError` with the specific reason (the first signature's, when none verifies).
 */
export function verifyBundle(bundle: Buffer, opts: VerifyOptions): VerifiedBundle {
  if (bundle.length > MAX_BUNDLE_BYTES)
    throw new BundleError("not_a_bundle", "the bundle is larger than 512 MiB");
  const contents = readBundle(bundle);
  if (contents.signatures.length === 0) throw new BundleError("unsigned", "the bundle has no signature");
  const signers = new Set<string>();
  let meta: BundleMeta | null = null;
  const failures: BundleError[] = [];
  for (const text of contents.signatures) {
    try {
      const one = checkOne(contents, text, opts.keys, opts.keySource ?? "updates.publicKeys");
      signers.add(one.key);
      meta = one.meta;
    } catch (err) {
      if (!(err instanceof BundleError)) throw err;
      failures.push(err);
    }
  }
  const first = failures[0];
  if (meta === null) throw first ?? new BundleError("unsigned", "the bundle has no signature");
  const m = contents.manifest;
  if (sha256(contents.configBytes) !== m.configSha256) {
    throw new BundleError("comment_mismatch", "config.yaml does not match the manifest's digest");
  }
  if (
    (contents.release === null) !== (m.releaseSha256 === null) ||
    (contents.release !== null && sha256(contents.release) !== m.releaseSha256)
  ) {
    throw new BundleError("comment_mismatch", "release.tar.gz does not match the manifest");
  }
  const needed = meta.kind === "release" ? Math.max(1, opts.releaseThreshold) : 1;
  if (signers.size < needed) {
    const why = failures.map((f) => f.message).join("; ");
    throw new BundleError(
      "threshold",
      `a release needs signatures from ${needed} distinct trusted keys; ${signers.size} verified${why === "" ? "" : ` (refused: ${why})`}`,
    );
  }
  return { meta, configText: contents.configText, release: contents.release, signers: [...signers] };
}

/** `--expires` normalised, or `bad_request` naming it. */
function expiryOf(text: string): string {
  const at = normaliseExpiry(text);
  if (at === null)
    throw new BundleError(
      "bad_request",
      `--expires ${JSON.stringify(text)} is not a date (YYYY-MM-DD that exists, or ISO 8601)`,
    );
  return at;
}
