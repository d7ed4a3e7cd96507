/** Fetching the member entitlement list from the fleet (issue 18) into the unit's EntitlementStore. */
import type { Dispatcher } from "undici";
import { UNIT_API } from "../core/fleetWire.js";
import { EntitlementError, type EntitlementList } from "../update/entitlements.js";
import { type EntitlementStore, SignedList } from "./entitlementStore.js";
import { signedGet, type UnitSigner } from "./signedGet.js";

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
  signer: UnitSigner,
  etag: string | null,
  store: EntitlementStore,
  opts: { timeoutMs?: number; signal?: AbortSignal; dispatcher?: Dispatcher | undefined } = {},
): Promise<FetchResult> {
  const path = `${UNIT_API}/entitlements`;
  const res = await signedGet(baseUrl, signer, "entitlements", etag, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
  if (res.status !== "ok") return res;
  const body = SignedList.safeParse(await res.body.json());
  if (!body.success) throw new EntitlementError("malformed", `GET ${path}: the body is not a signed list`);
  const list = store.install(body.data.document, body.data.signature);
  return { status: "updated", list, etag: res.etag };
}
