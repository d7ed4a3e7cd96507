import { timingSafeEqual } from "node:crypto";
import { amountToJson } from "../../core/money.js";
import {
  merchantKeyBytes,
  type PaymentStartHmacFields,
  paymentStartHmac,
  SigningError,
} from "../../payment/legacy/signing.js";
import { amount, invalid, LegacyFault, oneOf, parseExact, str, tokenCalc } from "./fields.js";
import { addMonths, type LegacyModel, REFUND_MONTHS } from "./model.js";
import { bulkRef, notPossible, type Operation, orderId, POS_ID_MAX, posOf } from "./ops.js";
import { type Entity, newEntity, setStatus } from "./state.js";
import { currentPaymentView, statusView } from "./views.js";

/** Direct payments and refunds (seed "Older interface"; pos-legacy §5.2, §6, §8). */

/** Refuses a PaymentStart whose HMAC does not match the MerchantKey (pos-legacy §4.1) with StatusCode 10. */
function verifyHmac(m: LegacyModel, fields: PaymentStartHmacFields, given: string): void {
  let expected: string;
  try {
    expected = paymentStartHmac(merchantKeyBytes(m.seed.merchantKey), fields);
  } catch (e) {
    if (e instanceof SigningError) throw invalid("a field contains a character outside ISO-8859-1");
    throw e;
  }
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(given, "utf8");
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw invalid("HMAC does not match");
}

const paymentStart: Operation = (m, f) => {
  const merchantId = str(f, "MerchantId");
  const locationId = str(f, "LocationId");
  const posId = str(f, "PoSId", { max: POS_ID_MAX });
  const order = orderId(f);
  const amt = amount(f);
  const bulk = bulkRef(f);
  const action = oneOf(f, "Action", ["Start", "Update"] as const);
  const calc = tokenCalc(f);
  const hmac = str(f, "HMAC", { max: 64 });
  if (amt.minor <= 0) throw invalid("Amount must be greater than 0.00");
  m.requireLocation(merchantId, locationId, 30);
  const p = m.pos(posId, 30);
  verifyHmac(m, { merchantId, locationId, posId, orderId: order, amount: amt.text, bulkRef: bulk }, hmac);
  const current = m.active(p);
  if (action === "Update") {
    // Seed: Update is allowed only for the entity in AwaitTokenRecalc (60); it then goes to Issued (20).
    if (current && (current.status !== 60 || current.orderId !== order)) {
      throw new LegacyFault(50, "Payment already in progress");
    }
    if (!current) throw invalid("Action Update needs a payment in AwaitTokenRecalc (60) with this OrderId");
    current.amount = amt.minor;
    current.bulkRef = bulk;
    setStatus(current, 20, m.now());
    return {
      ReCalc: 0,
      CustomerToken: current.customerToken,
      CustomerReceiptToken: current.customerReceiptToken,
    };
  }
  if (m.paid.has(order)) throw new LegacyFault(40, "Payment already exists and has been paid");
  if (current) throw new LegacyFault(50, "Payment already in progress");
  // Seed: PaymentStart deletes the PoS's earlier finished entity (Done, Cancel, Error).
  const e = newEntity(
    {
      kind: "payment",
      orderId: order,
      posId,
      amount: amt.minor,
      bulkRef: bulk,
      customerTokenCalc: calc,
      captureType: null,
    },
    m.now(),
  );
  p.payment = e;
  let recalc = false;
  if (p.checkin) {
    recalc = m.pair(e, p.checkin.user);
    p.checkin = null;
  }
  return {
    ReCalc: recalc ? 1 : 0,
    CustomerToken: recalc ? e.customerToken : null,
    CustomerReceiptToken: e.customerReceiptToken,
  };
};

/** The PoS's payment with this OrderId: the slot, else a Done payment kept for refunds. */
function paymentOf(m: LegacyModel, posId: string, order: string): Entity | undefined {
  const slot = m.poses.get(posId)?.payment;
  if (slot && slot.orderId === order) return slot;
  const done = m.paid.get(order)?.entity;
  return done && done.kind === "payment" && done.posId === posId ? done : undefined;
}

const getPaymentStatus: Operation = (m, f) => {
  const order = orderId(f);
  const p = posOf(m, f, 30);
  return statusView("PaymentStatus", p.posId, order, paymentOf(m, p.posId, order));
};

/** Seed: PaymentCancel acts on the PoS's entity; not possible once Done (100) (pos-legacy §6 [P]: 50). */
const paymentCancel: Operation = (m, f) => {
  const p = posOf(m, f, 30);
  const e = p.payment;
  if (!e) throw notPossible("No payment to cancel on this PoS");
  if (e.status === 100) throw notPossible("The payment is Done (100) and cannot be cancelled");
  p.payment = null;
  return {};
};

const getCurrentPayment: Operation = (m, f) => {
  const p = posOf(m, f, 10);
  return currentPaymentView(p, p.payment);
};

/** Seed "PaymentRefund" and pos-legacy §8: by OrderId, `"0.00"` or `""` = all that is left, ≤ 3 months. */
const paymentRefund: Operation = (m, f) => {
  const order = orderId(f);
  const text = str(f, "Amount", { max: 20, empty: true });
  str(f, "BulkRef", { empty: true });
  const requested = text === "" ? 0 : parseExact("Amount", text);
  const p = posOf(m, f, 30);
  const o = m.paid.get(order);
  if (!o || addMonths(o.at, REFUND_MONTHS) < m.now()) {
    throw new LegacyFault(1, "Order not found (not paid, or paid more than 3 months ago)");
  }
  if (o.posId !== p.posId) throw notPossible("The order was paid on another PoS");
  const remaining = o.amount - o.refunded;
  if (remaining === 0) throw new LegacyFault(3, "Transaction already refunded");
  const refund = requested === 0 ? remaining : requested;
  if (refund > remaining) throw new LegacyFault(2, "Amount larger than the remaining refundable amount");
  o.refunded += refund;
  m.record("refunded", order, refund, order);
  return { Remainder: amountToJson(o.amount - o.refunded), TransactionId: m.nextTransactionId() };
};

export const PAYMENT_OPERATIONS: Readonly<Record<string, Operation>> = {
  PaymentStart: paymentStart,
  GetPaymentStatus: getPaymentStatus,
  PaymentCancel: paymentCancel,
  GetCurrentPayment: getCurrentPayment,
  PaymentRefund: paymentRefund,
};
