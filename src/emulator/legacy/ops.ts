import { type Fields, LegacyFault, str } from "./fields.js";
import type { LegacyModel } from "./model.js";
import type { PosRecord } from "./state.js";

/** One operation of the older interface: validated fields in, the `200` body out, `LegacyFault` for 400. */
export type Operation = (m: LegacyModel, f: Fields) => Record<string, unknown>;

/** Reads MerchantId and LocationId and checks them against the seeded location (`code` per the seed's table). */
export function location(m: LegacyModel, f: Fields, code: 10 | 30): void {
  const merchantId = str(f, "MerchantId");
  const locationId = str(f, "LocationId");
  m.requireLocation(merchantId, locationId, code);
}

/** Reads MerchantId, LocationId and PoSId and returns the settled PoS, refusing unknown keys with `code`. */
export function posOf(m: LegacyModel, f: Fields, code: 10 | 30): PosRecord {
  const merchantId = str(f, "MerchantId");
  const locationId = str(f, "LocationId");
  const posId = str(f, "PoSId");
  m.requireLocation(merchantId, locationId, code);
  return m.pos(posId, code);
}

/** Seed "PoSId": 256 characters when merchant-chosen. */
export const POS_ID_MAX = 256;
/** Seed "OrderId": 32 characters. */
export const ORDER_ID_MAX = 32;
/** Seed "BulkRef": 18 characters, may be empty. */
export const BULK_REF_MAX = 18;

export function orderId(f: Fields): string {
  return str(f, "OrderId", { max: ORDER_ID_MAX });
}

export function bulkRef(f: Fields): string {
  return str(f, "BulkRef", { max: BULK_REF_MAX, empty: true });
}

/** StatusCode 50 "action not possible" with a reason. */
export function notPossible(text: string): LegacyFault {
  return new LegacyFault(50, text);
}
