import { amountToJson } from "../../core/money.js";
import type { SimUser } from "../types.js";
import type { Payment, Pos, Refund, Store } from "./model.js";

/** ISO 8601 with an explicit offset, as the service writes `paymentExpiresAt` (pos-v10 §5). */
function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+00:00");
}

const digits = (phone: string): string => phone.replace(/\D/g, "");

/**
 * The user's data after pairing (pos-v10 §5, §10): `customerReceiptToken` "" when the user has none,
 * `loyaltyIds` [] when not enrolled; before pairing the fields are absent ("not looked up yet").
 */
export function userData(user: SimUser): Record<string, unknown> {
  const loyal = user.features.includes("loyaltyMember");
  return {
    customerToken: loyal ? `CT${digits(user.phone)}` : null,
    customerReceiptToken: user.features.includes("receiptToken") ? `RT${digits(user.phone)}` : "",
    loyaltyIds: loyal ? [`LOY${digits(user.phone)}`] : [],
  };
}

/** `QueryPaymentResponse` (pos-v10 §5); `partialCapturePossible` only in Reserved (§7). */
export function paymentView(p: Payment, pollDelayMs: number): Record<string, unknown> {
  const view: Record<string, unknown> = {
    paymentId: p.paymentId,
    posId: p.pos.posId,
    orderId: p.orderId,
    status: p.status,
    pollDelayInMs: pollDelayMs,
    amount: p.amount === null ? null : amountToJson(p.amount),
    currencyCode: p.currency,
    restrictions: p.restrictions,
    merchantPaymentLabel: p.merchantPaymentLabel,
    plannedCaptureDelay: p.plannedCaptureDelay,
  };
  if (p.user !== null) Object.assign(view, userData(p.user));
  if (p.expiresAt !== null) view.paymentExpiresAt = isoWithOffset(p.expiresAt);
  if (p.status === "Reserved")
    view.partialCapturePossible = !(p.user?.features.includes("noPartialCapture") ?? false);
  return view;
}

/** `PosResponse` (pos-v10 §5). */
export function posView(pos: Pos): Record<string, unknown> {
  return {
    posId: pos.posId,
    merchantPosId: pos.merchantPosId,
    storeId: pos.storeId,
    name: pos.name,
    beaconId: pos.beaconId,
    supportedBeaconTypes: pos.supportedBeaconTypes,
    requirePaymentBeforeCheckin: pos.requirePaymentBeforeCheckin,
    callbackAlias: pos.callbackAlias,
  };
}

/** `GetRefundResponse` (pos-v10 §5). */
export function refundView(r: Refund, pollDelayMs: number): Record<string, unknown> {
  return {
    refundId: r.refundId,
    paymentId: r.payment.paymentId,
    refundOrderId: r.refundOrderId,
    amount: amountToJson(r.amount),
    currencyCode: r.currency,
    status: r.status,
    pollDelayInMs: pollDelayMs,
  };
}

/** `StoreResponse` (pos-v10 §5). */
export function storeView(s: Store): Record<string, unknown> {
  return {
    storeId: s.storeId,
    storeName: s.storeName,
    storeStreet: s.storeStreet,
    storeZipCode: s.storeZipCode,
    storeCity: s.storeCity,
    brandName: s.brandName,
    merchantBrandId: s.merchantBrandId,
    merchantLocationId: s.merchantLocationId,
  };
}
