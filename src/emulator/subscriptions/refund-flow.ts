/**
 * Refunds of executed subscription payments and captured one-off payments (seed 000 §States, Refund):
 * decided right after the request, with the refund callback and the ledger entry.
 */
import { formatAmount } from "../../core/money.js";
import { REFUND_WINDOW_MS, type SubsRefund } from "./model.js";
import type { SubsState } from "./state.js";

/** Refund status texts by code (seed 000 §States, Refund). */
export const REFUND_TEXTS: Record<number, string | null> = {
  0: null,
  60001: "Payment is fully refunded.",
  60002: "The total sum of previous Refunds cannot exceed the original payment amount.",
  60003: "Payment was not found.",
  60004: "Payment cannot be refunded.",
  60005: "Refund was declined by system.",
  60006: "Cannot refund payments that are older than 30 days.",
  60007: "Cannot refund instantly transferred payments.",
};

/** Processes a refund right after the request; the decision goes out in the refund callback. */
export function processRefund(s: SubsState, r: SubsRefund, providerId: string): void {
  s.refunds.set(r.id, r);
  const code = refundCode(s, r, providerId);
  r.status = code === 0 ? "Issued" : "Declined";
  r.statusCode = code;
  const a = s.agreements.get(r.agreementId);
  s.deps.delivery.send(
    "refund",
    r.callbackUrl,
    {
      refund_id: r.id,
      agreement_id: r.agreementId,
      payment_id: r.paymentId,
      amount: formatAmount(r.amount),
      currency: a?.currency ?? "DKK",
      status: r.status,
      status_text: REFUND_TEXTS[code] ?? null,
      status_code: code,
      external_id: r.externalId,
    },
    providerId,
  );
}

function refundCode(s: SubsState, r: SubsRefund, providerId: string): number {
  const p = s.payments.get(r.paymentId);
  const o = s.oneOffs.get(r.paymentId);
  const target =
    p && p.agreementId === r.agreementId && p.providerId === providerId
      ? {
          paid: p.status === "Executed" ? p.amount : null,
          at: p.executedAt,
          instant: p.instantTransfer,
          rec: p,
        }
      : o && o.agreementId === r.agreementId && o.providerId === providerId
        ? {
            paid: o.status === "Captured" ? o.captured : null,
            at: o.executedAt,
            instant: o.instantTransfer,
            rec: o,
          }
        : null;
  if (target === null) return 60003;
  if (target.paid === null || target.at === null) return 60004;
  if (target.instant) return 60007;
  if (s.now() - target.at > REFUND_WINDOW_MS) return 60006;
  const left = target.paid - target.rec.refunded;
  if (left <= 0) return 60001;
  const amount = r.amount === 0 ? left : r.amount;
  if (amount > left) return 60002;
  if (s.systemDeclines.refunds > 0) {
    s.systemDeclines.refunds -= 1;
    return 60005;
  }
  r.amount = amount;
  target.rec.refunded += amount;
  s.deps.ledger.record({
    interface: "subscriptions",
    id: r.id,
    paymentId: r.paymentId,
    orderId: r.externalId ?? r.id,
    kind: "refunded",
    amount,
    currency: s.agreements.get(r.agreementId)?.currency ?? "DKK",
    merchant: s.merchantOf(providerId)?.vat,
    point: providerId,
  });
  return 0;
}
