/** Fetching the member entitlement list from the fleet (issue 18) into the unit's EntitlementStore. */
import { type Dispatcher, request } from "undici";
import type { Clock } from "../core/clock.js";
import { signRequest, type UnitKeyPair } from "../core/fleetAuth.js";
import { UNIT_API } from "../core/fleetWire.js";
import { EntitlementError, type EntitlementList } from "../update/entitlements.js";
import { type EntitlementStore, SignedList } from "./entitlementStore.js";

export type FetchResult =
  | { status: "updated"; list: EntitlementList; etag: string | null }
  | { status: "unchanged" }
  | { status: "none" };

/**
 * `GET /api/unit/v1/entitlements` from the fleet (conditional on `etag`), signed with the unit's key, and
 * installs a new list into `store` (verified there: a list the fleet sends is trusted no more than a file).
 * Throws on a network error, an HTTP error status, a malformed body, or a list `install` refuses
 * (EntitlementError / StaleListError): the list in force stays. The fleet link calls it when the heartbeat's
 * `entitlementsEtag` differs from the one it holds.
 */
export async function fetchEntitlements(
  baseUrl: string,
  signer: { key: UnitKeyPair; clock: Clock },
  etag: string | null,
  store: EntitlementStore,
  opts: { timeoutMs?: number; signal?: AbortSignal; dispatcher?: Dispatcher | undefined } = {},
): Promise<FetchResult> {
  const path = `${UNIT_API}/entitlements`;
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = signRequest(signer.key, "GET", path, "", signer.clock.now());
  if (etag !== null) headers["if-none-match"] = etag;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const res = await request(url, {
    ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    method: "GET",
    headers,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
  if (res.statusCode === 304) {
    await res.body.dump();
    return { status: "unchanged" };
  }
  if (res.statusCode === 404) {
    await res.body.dump();
    return { status: "none" };
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`GET ${path}: HTTP ${res.statusCode}`);
  }
  const body = SignedList.safeParse(await res.body.json());
  if (!body.success) throw new EntitlementError("malformed", `GET ${path}: the body is not a signed list`);
  const list = store.install(body.data.document, body.data.signature);
  const tag = res.headers.etag;
  return { status: "updated", list, etag: typeof tag === "string" ? tag : null };
}
