/**
 * The unit's signed GET of the unit API (entitlements, bundles, values): signed with the unit key over the
 * unit API's own path (as the fleet link signs its POSTs), conditional on the ETag held. 304 and 404 are
 * answers (nothing new, nothing there); any other status but 200 throws naming the path.
 */
import { type Dispatcher, request } from "undici";
import type { Clock } from "../core/clock.js";
import { signRequest, type UnitKeyPair } from "../core/fleetAuth.js";
import { UNIT_API } from "../core/fleetWire.js";

export interface UnitSigner {
  key: UnitKeyPair;
  clock: Clock;
}

export type SignedGetResult =
  | {
      status: "ok";
      body: Dispatcher.ResponseData["body"];
      etag: string | null;
      headers: Dispatcher.ResponseData["headers"];
    }
  | { status: "unchanged" }
  | { status: "none" };

/** `GET <UNIT_API>/<name>` at `url` (default `baseUrl` + the path), signed, conditional on `etag`. */
export async function signedGet(
  baseUrl: string,
  signer: UnitSigner,
  name: string,
  etag: string | null,
  opts: { timeoutMs: number; signal?: AbortSignal; url?: string; dispatcher?: Dispatcher | undefined },
): Promise<SignedGetResult> {
  const path = `${UNIT_API}/${name}`;
  const headers: Record<string, string> = signRequest(signer.key, "GET", path, "", signer.clock.now());
  if (etag !== null) headers["if-none-match"] = etag;
  const res = await request(opts.url ?? new URL(path, baseUrl), {
    ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    method: "GET",
    headers,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
  if (res.statusCode === 304 || res.statusCode === 404) {
    await res.body.dump();
    return { status: res.statusCode === 304 ? "unchanged" : "none" };
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`GET ${path}: HTTP ${res.statusCode}`);
  }
  const tag = res.headers.etag;
  return { status: "ok", body: res.body, etag: typeof tag === "string" ? tag : null, headers: res.headers };
}
