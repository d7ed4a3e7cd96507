/** The online-payment interface's answers: a payment (`GET /api/v1/payments/{id}`) and a merchant. */
import type { OnlineMerchant, OnlinePayment } from "./model.js";

/** The payment as `GET /api/v1/payments/{id}` shows it (an emulator addition for tests). */
export function paymentView(p: OnlinePayment) {
  return {
    paymentId: p.paymentId,
    merchantId: p.input.merchantId,
    pspReferenceId: p.input.pspReferenceId,
    merchantOrderId: p.input.merchantOrderId,
    status: p.status,
    failureReason: p.failureReason,
    amount: p.input.amount,
    currencyCode: p.input.currencyCode,
    autoCapture: p.input.autoCapture,
    cardType: p.cardType,
    authorizationAttemptId: p.authorizationAttemptId,
    validUntil: p.input.validUntil === null ? null : new Date(p.input.validUntil).toISOString(),
    reservationExpireTimestamp:
      p.reservationExpireTimestamp === null ? null : new Date(p.reservationExpireTimestamp).toISOString(),
    redirectFromServiceUrl: p.redirectFromServiceUrl,
    authorizedAmount: p.authorized,
    capturedAmount: p.captured,
    cancelledAmount: p.cancelled,
    refundedAmount: p.refunded,
    expiredAmount: p.expired,
    operations: p.operations,
  };
}

export function merchantView(m: OnlineMerchant) {
  return {
    merchantId: m.merchantId,
    externalId: m.externalId,
    name: m.name,
    billingCurrency: m.billingCurrency,
    countryCode: m.countryCode,
    vatNumber: m.vatNumber,
    merchantCategoryCode: m.merchantCategoryCode,
  };
}
