import type { Minor } from "../../core/money.js";
import type { SimUser } from "../types.js";

/** Payment states (pos-v10 §6). */
export type PaymentStatus =
  | "Prepared"
  | "Initiated"
  | "Paired"
  | "IssuedToUser"
  | "Reserved"
  | "CancelledByUser"
  | "CancelledByClient"
  | "CancelledByService"
  | "ExpiredAndCancelled"
  | "Captured";

/** Refund states (pos-v10 §6). */
export type RefundStatus =
  | "Initiated"
  | "Reserved"
  | "Captured"
  | "CancelledByClient"
  | "CancelledByService"
  | "ExpiredAndCaptured";

export type Currency = "DKK" | "EUR";
export const CURRENCIES: readonly Currency[] = ["DKK", "EUR"];
export type CaptureDelay = "None" | "LessThan24Hours" | "LessThan14Days";
export const CAPTURE_DELAYS: readonly CaptureDelay[] = ["None", "LessThan24Hours", "LessThan14Days"];
export type BeaconType = "QR" | "NFC" | "Bluetooth";
export const BEACON_TYPES: readonly BeaconType[] = ["QR", "NFC", "Bluetooth"];

/** States that block a new payment on the PoS (pos-v10 §7: Reserved does not block). */
export const ACTIVE_STATES: ReadonlySet<PaymentStatus> = new Set([
  "Prepared",
  "Paired",
  "Initiated",
  "IssuedToUser",
]);

export interface Restrictions {
  debitCardDisallowed?: boolean | null;
  creditCardDisallowed?: boolean | null;
}

/** Who created a resource: the integrator (token clientId) acting for a merchant (VAT). */
export interface Owner {
  clientId: string;
  vat: string;
}

export interface Store {
  storeId: string;
  vat: string;
  /** The merchant's GUID, sent as `MerchantId` in notification callbacks (pos-v10 §16). */
  merchantGuid: string;
  merchantBrandId: string;
  merchantLocationId: string;
  storeName: string;
  storeStreet: string;
  storeZipCode: string;
  storeCity: string;
  brandName: string;
  /** Initiate/prepare on a PoS of a store that is not activated → 1204 (pos-v10 §19). */
  activated: boolean;
  /** Available balance for refunds, minor units (1368): seeded, lowered by refunds, restored by refund cancels. */
  balance: Minor;
}

export interface Pos {
  posId: string;
  owner: Owner;
  merchantPosId: string;
  storeId: string;
  name: string;
  beaconId: string;
  supportedBeaconTypes: BeaconType[];
  requirePaymentBeforeCheckin: boolean;
  callbackAlias: string | null;
  deleted: boolean;
  /** The payment in an active state, if any (at most one). */
  active: Payment | null;
  /** A check-in not yet paired with a payment (pos-v10 §10 lifecycle). */
  checkin: { user: SimUser; at: number } | null;
  /** All payments on this PoS still held in memory. */
  payments: Set<Payment>;
  /** Last check-in poll, for the early-poll count (pos-v10 §10). */
  polledBy: string | null;
  polledAt: number;
}

export interface Payment {
  paymentId: string;
  /** Creation order, to find the latest payment of a reused orderId. */
  seq: number;
  pos: Pos;
  owner: Owner;
  orderId: string;
  status: PaymentStatus;
  /** When the current state was entered (emulator ms); inactivity counts from here. */
  since: number;
  /** Created by prepare; `readied` holds the canonical ready request once ready was called. */
  prepared: boolean;
  readied: string | null;
  amount: Minor | null;
  currency: Currency | null;
  plannedCaptureDelay: CaptureDelay | null;
  restrictions: Restrictions | null;
  merchantPaymentLabel: string | null;
  /** The paired app user. */
  user: SimUser | null;
  /** When an accepted payment becomes Reserved (or is refused), emulator ms. */
  acceptDueAt: number | null;
  expiresAt: number | null;
  capturedAmount: Minor | null;
  capturedAt: number | null;
  /** Sum of the refunds not cancelled, minor units. */
  refunded: Minor;
  refunds: Refund[];
  polledBy: string | null;
  polledAt: number;
}

export interface Refund {
  refundId: string;
  payment: Payment;
  owner: Owner;
  refundOrderId: string;
  amount: Minor;
  currency: Currency;
  status: RefundStatus;
  /** When an Initiated refund becomes Reserved, emulator ms. */
  reserveDueAt: number;
  reservedAt: number | null;
}

/** Timing and limits of the V10 model, all in emulator ms. */
export interface V10Config {
  /** `pollDelayInMs` of payments and check-in. */
  pollDelayMs: number;
  /** `pollDelayInMs` of refunds (pos-v10 §10: may be below 1000; example 100). */
  refundPollDelayMs: number;
  /** From the user's accept to Reserved (pos-v10 §19). */
  acceptToReservedMs: number;
  /** Extra accept delay of `slowToAccept` users. */
  slowAcceptMs: number;
  /** Inactivity before CancelledByService (pos-v10 §19). */
  inactivityMs: number;
  /** An unpaired check-in lapses after this (pos-v10 §10). */
  checkinTimeoutMs: number;
  /** From refund creation to Reserved. */
  refundReserveMs: number;
  /** Finished payments (and idempotency keys) are purged after this; captured ones also wait out the refund window. */
  retentionMs: number;
}

/** Fixed service rules (pos-v10 §7, §8). */
export const RESERVATION_MS = 7 * 24 * 3600_000;
export const REFUND_AUTO_CAPTURE_MS = 24 * 3600_000;
export const REFUND_MAX_AGE_MS = 90 * 24 * 3600_000;
