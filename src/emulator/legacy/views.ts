import { amountToJson } from "../../core/money.js";
import type { Entity, PosRecord } from "./state.js";

/**
 * Response bodies of the older interface, with exactly the casing the seed shows for each operation
 * (pos-legacy §2). Amounts are JSON numbers in responses (seed "Amount": number in responses).
 */

/** GetPaymentStatus / GetReservationStatus body; an absent entity reads as status 10 (pos-legacy §6 [P]). */
export function statusView(
  statusField: "PaymentStatus" | "ReservationStatus",
  posId: string,
  orderId: string,
  e: Entity | undefined,
): Record<string, unknown> {
  return {
    PoSId: posId,
    [statusField]: e ? e.status : 10,
    OrderId: orderId,
    TransactionId: e?.transactionId ?? null,
    Amount: e ? amountToJson(e.amount) : null,
    CustomerId: e?.customerId ?? null,
    CustomerToken: e?.customerToken ?? null,
    CustomerReceiptToken: e?.customerReceiptToken ?? null,
    PaymentSignature: null,
  };
}

/** GetCurrentPayment body: `PoSId`, `PoSUnitId`, `LatestUpdate` as `DD-MM-YYYY HH:mm:ss` (seed). */
export function currentPaymentView(p: PosRecord, e: Entity | null): Record<string, unknown> {
  return {
    PoSId: p.posId,
    PoSUnitId: p.unitId ?? "",
    PaymentStatus: e ? e.status : 10,
    ...entityFields(e),
    LatestUpdate: e ? dayFirst(e.updatedAt) : null,
  };
}

/** GetCurrentReservation body: `PosId`, `PosUnitId`, `LastestUpdate` (sic) as `YYYY-MM-DDTHH:mm:ss.fff` (seed). */
export function currentReservationView(p: PosRecord, e: Entity | undefined): Record<string, unknown> {
  return {
    PosId: p.posId,
    PosUnitId: p.unitId ?? "",
    PaymentStatus: e ? e.status : 10,
    ...entityFields(e ?? null),
    LastestUpdate: e ? isoMillis(e.updatedAt) : null,
  };
}

/** One element of GetPosList's `Poses`: `PosUnitId` null when none, `Payment` null or the payment slot. */
export function posListItem(p: PosRecord): Record<string, unknown> {
  const e = p.payment;
  return {
    PosId: p.posId,
    Name: p.name,
    PosUnitId: p.unitId,
    Payment: e ? { Status: e.status, ...entityFields(e), LatestUpdate: dayFirst(e.updatedAt) } : null,
  };
}

function entityFields(e: Entity | null): Record<string, unknown> {
  return {
    OrderId: e?.orderId ?? null,
    TransactionId: e?.transactionId ?? null,
    Amount: e ? amountToJson(e.amount) : null,
    CustomerId: e?.customerId ?? null,
    CustomerToken: e?.customerToken ?? null,
    CustomerReceiptToken: e?.customerReceiptToken ?? null,
  };
}

const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/** `DD-MM-YYYY HH:mm:ss` in UTC, e.g. `06-02-2017 09:30:39` (seed, GetCurrentPayment). */
export function dayFirst(ms: number): string {
  const d = new Date(ms);
  const date = `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()}`;
  return `${date} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `YYYY-MM-DDTHH:mm:ss.fff` in UTC, e.g. `2017-05-22T10:00:02.977` (seed, GetCurrentReservation). */
export function isoMillis(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}
