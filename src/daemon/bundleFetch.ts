/**
 * Issue 41: the daemon fetches the fleet's bundle into the applier's inbox when a heartbeat answer's
 * `bundleEtag` names one it does not hold (FleetLink schedules it after a bounded jitter). Why the daemon:
 * it already holds the unit key and talks to the fleet, and the inbox (`updates.inbox`, owned by the daemon's
 * user) is what `vendd-bundle.path` watches, so the root applier (no network: PrivateNetwork=yes) starts the
 * moment the file is renamed into place and does everything else as for a USB copy (verify, stage, swap,
 * health gate, commit or roll back). The daemon never writes /etc/vendd or /opt/vendd and never applies.
 *
 * The download is streamed to a dot-named file in the inbox (not matched by the path unit), counted and
 * hashed on the way, checked against Content-Length, fsynced and renamed to `fleet-<sha256 prefix>.vbundle`:
 * the applier sees a whole file or none. The ETag held is kept in `fleet-bundle.json` beside the unit key,
 * so a restarted daemon does not fetch again what it already handed over.
 */
import { createHash } from "node:crypto";
import { closeSync, createWriteStream, fsyncSync, openSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Dispatcher } from "undici";
import { writeFileAtomic } from "../core/atomicFile.js";
import { fleetBundleUrl, UNIT_API } from "../core/fleetWire.js";
import { MAX_BUNDLE_BYTES } from "../update/bundle.js";
import { signedGet, type UnitSigner } from "./signedGet.js";

export type BundleFetchResult =
  | { status: "fetched"; etag: string | null; sha256: string; file: string }
  | { status: "unchanged" }
  | { status: "none" };

/** The file beside the unit key that keeps the ETag of the last bundle handed to the applier. */
export function heldBundleFile(keyFile: string): string {
  return join(dirname(keyFile), "fleet-bundle.json");
}

/** The ETag held (null: none, or the file is missing or unreadable: the worst case is one more download). */
export function readHeldBundleEtag(file: string): string | null {
  try {
    const v: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof v === "object" && v !== null && "etag" in v && typeof v.etag === "string") return v.etag;
  } catch {
    // Missing or unreadable: none held.
  }
  return null;
}

export function writeHeldBundleEtag(file: string, etag: string): void {
  writeFileAtomic(file, `${JSON.stringify({ etag })}\n`, { mode: 0o600 });
}

/**
 * `GET /api/unit/v1/bundle` (conditional on `etag`), signed with the unit key, into `inbox`. Throws on a
 * network error, an HTTP error status, an oversized or truncated body (nothing is left in the inbox).
 */
export async function fetchBundleToInbox(
  baseUrl: string,
  signer: UnitSigner,
  etag: string | null,
  inbox: string,
  opts: { timeoutMs?: number; signal?: AbortSignal; dispatcher?: Dispatcher | undefined } = {},
): Promise<BundleFetchResult> {
  const path = `${UNIT_API}/bundle`;
  // The fleet's bundle address (fleetWire.ts fleetBundleUrl), signed over the unit API's own path.
  const got = await signedGet(baseUrl, signer, "bundle", etag, {
    timeoutMs: opts.timeoutMs ?? 120_000,
    url: fleetBundleUrl(baseUrl),
    ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
  if (got.status !== "ok") return got;
  const res = got;
  const declared = res.headers["content-length"];
  const expected = typeof declared === "string" ? Number(declared) : null;
  if (expected !== null && (!Number.isSafeInteger(expected) || expected > MAX_BUNDLE_BYTES)) {
    await res.body.dump();
    throw new Error(`GET ${path}: the bundle is larger than 512 MiB`);
  }
  const tmp = join(inbox, ".fleet-bundle.download");
  const hash = createHash("sha256");
  let bytes = 0;
  try {
    res.body.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      hash.update(chunk);
      if (bytes > MAX_BUNDLE_BYTES) res.body.destroy(new Error("the bundle is larger than 512 MiB"));
    });
    await pipeline(res.body, createWriteStream(tmp, { mode: 0o600 }));
    if (expected !== null && bytes !== expected)
      throw new Error(`GET ${path}: truncated download: ${bytes} of ${expected} bytes`);
    const fd = openSync(tmp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const sha256 = hash.digest("hex");
    const file = join(inbox, `fleet-${sha256.slice(0, 16)}.vbundle`);
    renameSync(tmp, file);
    return { status: "fetched", etag: res.etag, sha256, file };
  } finally {
    rmSync(tmp, { force: true });
  }
}
