/**
 * The transitions of subscription payments (seed 000 §States, Subscription payment): received, validated
 * on the next tick, run on the due date with retries through the grace days, rejected by the user,
 * declined by the merchant or system; each change goes out in the batched payment status callbacks.
 */

import { DAY_MS } from "../../core/days.js";
import { amountToJson, type Minor } from "../../core/money.js";
import { at, dateOf, daysBetween, EXECUTION_MINUTE, RETRY_MINUTES, type SubsPayment } from "./model.js";
import { SubsConflict, type SubsState } from "./state.js";

/** Payment status texts by code (seed 000 §States, Subscription payment and One-off payment). */
export const PAYMENT_TEXTS: Record<number, string | null> = {
  0: null,
  50000: null,
  50001: "Rejected by user.",
  50002: "Declined by merchant.",
  50003: "Declined by system: Agreement is not Active state.",
  50004: "Declined by system: Found duplicates for same DueDate and AgreementId or ExternalId.",
  50005: "Declined by system: Agreement was canceled.",
  50006: "Declined by system.",
  50008: "Expired by system.",
  50009: "Declined due to user status.",
  50010: "Agreement does not exist.",
  50011: "Due date of the payment must be at least 1 day in the future.",
  50012: "Due date must be no more than 126 days in the future.",
  50013: "Automatic reservation failed. User action is needed.",
};

/** Largest subscription payment per country, minor units (seed 000 §Limits). */
const MAX_AMOUNT = { DK: 6_000_000, FI: 200_000 } as const;

/**
 * Attachment V1 (`invoice`): its due_date must lie between today and 400 days ahead, else the request is
 * declined (seed 000); the emulator declines such a payment with the core-system code 50006.
 */
function invoiceDueDateOk(invoice: unknown, today: string): boolean {
  if (typeof invoice !== "object" || invoice === null) return true;
  const due = (invoice as Record<string, unknown>).due_date;
  if (typeof due !== "string" || Number.isNaN(Date.parse(`${due}T00:00:00Z`))) return false;
  const ahead = daysBetween(today, due);
  return ahead >= 0 && ahead <= 400;
}

function paymentEvent(s: SubsState, p: SubsPayment, code: number, paymentDate: string): void {
  const a = s.agreements.get(p.agreementId);
  s.deps.delivery.enqueue({
    providerId: p.providerId,
    body: {
      agreement_id: p.agreementId,
      payment_id: p.id,
      amount: amountToJson(p.amount),
      currency: a?.currency ?? "DKK",
      payment_date: paymentDate,
      status: p.status,
      status_text: PAYMENT_TEXTS[code] ?? null,
      status_code: code,
      external_id: p.externalId,
      payment_type: "Regular",
    },
  });
}

export function finishPayment(
  s: SubsState,
  p: SubsPayment,
  status: "Declined" | "Rejected" | "Failed" | "Executed",
  code: number,
): void {
  p.status = status;
  p.nextRunAt = null;
  paymentEvent(s, p, code, dateOf(s.now()));
}

/** Accepts a payment for asynchronous validation (the 202 of the payment-request call). */
export function receivePayment(s: SubsState, p: SubsPayment): void {
  s.payments.set(p.id, p);
  s.queueValidation(p.id);
}

/** Validation right after receipt (seed 000: 50003, 50004, 50006, 50009-50012). */
export function validate(s: SubsState, p: SubsPayment): void {
  const code = validationCode(s, p);
  if (code !== null) {
    finishPayment(s, p, "Declined", code);
    return;
  }
  p.status = "Pending";
  p.nextRunAt = at(p.dueDate, EXECUTION_MINUTE);
}

function validationCode(s: SubsState, p: SubsPayment): number | null {
  const a = s.agreements.get(p.agreementId);
  const today = dateOf(p.receivedAt);
  if (a === undefined || a.providerId !== p.providerId) return 50010;
  if (a.status !== "Accepted") return 50003;
  const ahead = daysBetween(today, p.dueDate);
  if (ahead < 1) return 50011;
  if (ahead > (p.deprecated ? 32 : 126)) return 50012;
  const duplicate = [...s.payments.values()].some(
    (q) =>
      q !== p &&
      q.agreementId === p.agreementId &&
      q.dueDate === p.dueDate &&
      q.externalId === p.externalId &&
      (q.status === "Pending" || q.status === "Suspended" || q.status === "Executed"),
  );
  if (duplicate) return 50004;
  if (a.phone !== null && s.userState(a.phone).blocked) return 50009;
  if (p.amount > MAX_AMOUNT[a.country] || !invoiceDueDateOk(p.invoice, today)) return 50006;
  if (s.systemDeclines.payments > 0) {
    s.systemDeclines.payments -= 1;
    return 50006;
  }
  return null;
}

/** User rejects a Pending payment in the 8-to-1 days window before its due date (50001). */
export function rejectPayment(s: SubsState, p: SubsPayment): void {
  requireVisible(s, p);
  finishPayment(s, p, "Rejected", 50001);
}

/** Merchant declines (deletes) a Pending payment request (50002). */
export function declinePayment(s: SubsState, p: SubsPayment): void {
  if (p.status !== "Pending" && p.status !== "Received")
    throw new SubsConflict(`payment is ${p.status}, not Pending`);
  finishPayment(s, p, "Declined", 50002);
}

function requireVisible(s: SubsState, p: SubsPayment): void {
  if (p.status !== "Pending") throw new SubsConflict(`payment is ${p.status}, not Pending`);
  const ahead = daysBetween(dateOf(s.now()), p.dueDate);
  if (ahead < 1 || ahead > 8)
    throw new SubsConflict("the user sees a Pending payment 8 to 1 days before its due date");
}

/** Decrease of a Pending payment's amount; compared with the original amount only (seed 000 rule 1). */
export function changeAmount(p: SubsPayment, amount: Minor): void {
  if (p.status !== "Pending" && p.status !== "Received")
    throw new SubsConflict(`payment is ${p.status}: only a Pending payment can be changed`);
  if (amount > p.originalAmount) throw new SubsConflict("the amount can only be decreased");
  p.amount = amount;
}

/** The run times of a failing payment after `from`: 06:00 … 22:30 on the due date and each grace day. */
function nextRetry(p: SubsPayment, from: number): number | null {
  const days = Math.max(1, p.graceDays);
  for (let day = 0; day < days + (p.graceDays > 0 ? 1 : 0); day++) {
    const date = dateOf(at(p.dueDate, 0) + day * DAY_MS);
    for (const m of RETRY_MINUTES) {
      const t = at(date, m);
      if (t > from) return t;
    }
  }
  return null;
}

/** End of the last retry day (23:59 of the due date or of the last grace day). */
function failAt(p: SubsPayment): number {
  return at(p.dueDate, 23 * 60 + 59) + p.graceDays * DAY_MS;
}

function run(s: SubsState, p: SubsPayment, t: number): void {
  const a = s.agreements.get(p.agreementId);
  const user = a?.phone ? s.userState(a.phone) : undefined;
  if (user !== undefined && !user.cardFails) {
    p.status = "Executed";
    p.executedAt = t;
    p.nextRunAt = null;
    p.instantTransfer = user.instantTransfer;
    const m = s.merchantOf(p.providerId);
    s.deps.ledger.record({
      interface: "subscriptions",
      id: p.id,
      paymentId: null,
      orderId: p.externalId,
      kind: "paid",
      amount: p.amount,
      currency: a?.currency ?? "DKK",
      merchant: m?.vat,
      point: p.providerId,
    });
    paymentEvent(s, p, 0, dateOf(t));
    return;
  }
  p.status = "Suspended";
  const next = nextRetry(p, t);
  p.nextRunAt = next ?? failAt(p);
}

/** Runs every attempt of a Pending or Suspended payment that became due by `now`; Failed after the last. */
export function runDue(s: SubsState, p: SubsPayment, now: number): void {
  while ((p.status === "Pending" || p.status === "Suspended") && p.nextRunAt !== null && p.nextRunAt <= now) {
    const t = p.nextRunAt;
    if (p.status === "Suspended" && t >= failAt(p)) {
      p.status = "Failed";
      p.nextRunAt = null;
      paymentEvent(s, p, 50000, dateOf(t));
      return;
    }
    run(s, p, t);
  }
}
