/**
 * The online-payment interface's data (seed 002 §Online payments): PSP clients, merchants, payments with
 * their amounts and operations, and the record of each callback sent.
 */
import type { InitiateInput, MerchantInput } from "./validate.js";

/** A payment service provider's API client (`x-gateway-client-id` / `-secret`). */
export interface PspClient {
  clientId: string;
  clientSecret: string;
  integratorName: string;
  clientName: string;
  active: boolean;
}

export interface OnlineMerchant extends MerchantInput {
  merchantId: string;
  clientId: string;
  deleted: boolean;
}

/**
 * Payment status (seed: "states of the online payment: not shown"; this emulator's): Initiated → (user
 * accepts, card data sent) AwaitingAuthorization → Authorized | Failed; Initiated → Expired (validUntil);
 * Initiated/AwaitingAuthorization → Cancelled; Authorized → Captured (nothing left to capture, something
 * captured) | Cancelled (all cancelled) | ReservationExpired (reservationExpireTimestamp passed).
 */
export type OnlineStatus =
  | "Initiated"
  | "AwaitingAuthorization"
  | "Authorized"
  | "Captured"
  | "Cancelled"
  | "Failed"
  | "Expired"
  | "ReservationExpired";

/** The money operations a PSP asks for. */
export type PaymentOp = "capture" | "cancel" | "refund";

export interface OnlinePayment {
  paymentId: string;
  clientId: string;
  input: InitiateInput;
  status: OnlineStatus;
  failureReason: string | null;
  authorizationAttemptId: string | null;
  succeededAttemptId: string | null;
  cardType: string | null;
  reservationExpireTimestamp: number | null;
  redirectFromServiceUrl: string;
  authorized: number;
  captured: number;
  cancelled: number;
  refunded: number;
  expired: number;
  /** `*Identifier` → {canonical request, answered id}, per operation. */
  idempotency: Map<string, { request: string; id: string }>;
  operations: { type: PaymentOp; id: string; amount: number; identifier: string; timestamp: string }[];
}

export interface OnlineCallbackRecord {
  kind: "cardData" | "failedPayment" | "address";
  url: string;
  paymentId: string;
  status: number | null;
  at: number;
}
