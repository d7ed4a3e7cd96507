import type { EmuRequest, EmuResponse } from "../types.js";
import { fail } from "./errors.js";
import type { Caller } from "./headers.js";
import type { V10Deps } from "./machine.js";
import { BRAND_ID, LOCATION_ID } from "./validate.js";
import { storeView } from "./views.js";

/** `GET /v10/stores/{id}`: 404 when unknown or another merchant's. */
export function getStore(d: V10Deps, caller: Caller, storeId: string): EmuResponse {
  const store = d.world.stores.get(storeId);
  if (store === undefined || store.vat !== caller.vat) fail(404, null, "store not found");
  return { status: 200, body: storeView(store) };
}

/**
 * `GET /v10/stores?merchantBrandId=&merchantLocationId=` (pos-v10 §13): malformed 1119/1120, only one of the
 * two 1122, none → every store of the merchant (VAT header), both → that store.
 */
export function listStores(d: V10Deps, req: EmuRequest, caller: Caller): EmuResponse {
  const brand = req.query.get("merchantBrandId");
  const location = req.query.get("merchantLocationId");
  if (brand !== null && !BRAND_ID.test(brand)) fail(400, "1119", "invalid merchantBrandId");
  if (location !== null && !LOCATION_ID.test(location)) fail(400, "1120", "invalid merchantLocationId");
  if ((brand === null) !== (location === null))
    fail(400, "1122", "give both merchantBrandId and merchantLocationId, or neither");
  const ids: string[] = [];
  for (const s of d.world.stores.values()) {
    if (s.vat !== caller.vat) continue;
    if (brand !== null && (s.merchantBrandId !== brand || s.merchantLocationId !== location)) continue;
    ids.push(s.storeId);
  }
  return { status: 200, body: { storeIds: ids } };
}

/** Path of the temporary VAT lookup (seed V10 endpoint table). */
export const VAT_LOOKUP_PATH = "/pos-core-for-integrators/public/v1/stores/vat";

/**
 * The temporary VAT lookup by merchantBrandId and merchantLocationId. Its response is not published; this
 * emulator invents `200 {"merchantVatNumber": "DK…"}` for a known store and `404` otherwise (pos-v10 §19).
 */
export function vatLookup(d: V10Deps, req: EmuRequest): EmuResponse {
  const brand = req.query.get("merchantBrandId");
  const location = req.query.get("merchantLocationId");
  if (brand === null || location === null)
    fail(400, "1099", "merchantBrandId and merchantLocationId are required");
  for (const s of d.world.stores.values()) {
    if (s.merchantBrandId === brand && s.merchantLocationId === location) {
      return { status: 200, body: { merchantVatNumber: s.vat } };
    }
  }
  fail(404, null, "no store with this brand and location");
}
