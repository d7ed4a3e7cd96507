/** The JSON views of agreements, subscription payments and one-off payments in route answers. */
import { amountToJson } from "../../core/money.js";
import type { Obj } from "./codec.js";
import type { Agreement, OneOff, SubsPayment } from "./model.js";

export function agreementView(a: Agreement): Obj {
  return {
    id: a.id,
    status: a.status,
    amount: a.amount === null ? null : amountToJson(a.amount),
    currency: a.currency,
    country_code: a.country,
    plan: a.plan,
    description: a.description,
    frequency: a.frequency,
    external_id: a.externalId,
    next_payment_date: a.nextPaymentDate,
    disable_notification_management: a.disableNotificationManagement,
    one_off_payment_id: a.oneOffId,
  };
}

export function paymentView(p: SubsPayment): Obj {
  return {
    payment_id: p.id,
    agreement_id: p.agreementId,
    amount: amountToJson(p.amount),
    due_date: p.dueDate,
    external_id: p.externalId,
    description: p.description,
    grace_period_days: p.graceDays === 0 ? null : p.graceDays,
    status: p.status === "Received" || p.status === "Suspended" ? "Pending" : p.status,
  };
}

export function oneOffView(o: OneOff): Obj {
  return {
    id: o.id,
    agreement_id: o.agreementId,
    amount: amountToJson(o.amount),
    captured_amount: amountToJson(o.captured),
    external_id: o.externalId,
    description: o.description,
    status: o.status,
  };
}
