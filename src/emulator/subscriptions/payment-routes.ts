/**
 * The merchant's routes of payments: request subscription payments in bulk, lower a pending payment's
 * amount, refund a paid payment, and the attachment (invoice) of a payment.
 */
import { formatAmount } from "../../core/money.js";
import type { EmuResponse } from "../types.js";
import { amount, httpsUrl, jsonPatch, type Obj, obj, optStr, parseJson, SubsInputError } from "./codec.js";
import { NOT_FOUND, precondition } from "./errors.js";
import type { SubsPayment } from "./model.js";
import { parseAttachment, parsePayment } from "./parse.js";
import { changeAmount, receivePayment } from "./payment-flow.js";
import { pdfOf } from "./pdf.js";
import { processRefund } from "./refund-flow.js";
import { type Ctx, requireCallbackUrl } from "./route-ctx.js";

const MAX_PAYMENTS = 2000;

export function paymentRequests(ctx: Ctx, providerId: string): EmuResponse {
  const list = parseJson(ctx.req.body);
  if (!Array.isArray(list) || list.length === 0)
    throw new SubsInputError("body must be a JSON array of at least one payment request");
  if (list.length > MAX_PAYMENTS) throw new SubsInputError(`at most ${MAX_PAYMENTS} payments per request`);
  requireCallbackUrl(ctx, providerId);
  const pending: Obj[] = [];
  const rejected: Obj[] = [];
  const made: SubsPayment[] = [];
  for (const item of list) {
    const ext = typeof item === "object" && item !== null ? (item as Obj).external_id : undefined;
    try {
      const p = parsePayment(item, ctx.deprecated);
      made.push({
        id: ctx.s.newId(),
        providerId,
        agreementId: p.agreementId,
        amount: p.amount,
        originalAmount: p.amount,
        dueDate: p.dueDate,
        externalId: p.externalId,
        description: p.description,
        graceDays: p.graceDays,
        status: "Received",
        nextRunAt: null,
        executedAt: null,
        instantTransfer: false,
        refunded: 0,
        deprecated: ctx.deprecated,
        invoice: p.invoice,
        receivedAt: ctx.now(),
      });
    } catch (e: unknown) {
      if (!(e instanceof SubsInputError)) throw e;
      if (ctx.deprecated) throw e;
      rejected.push({ external_id: typeof ext === "string" ? ext : null, error_description: e.message });
    }
  }
  if (ctx.deprecated) {
    for (const p of made) {
      const a = ctx.s.agreements.get(p.agreementId);
      if (a === undefined || a.providerId !== providerId) return NOT_FOUND;
      const dup = [
        ...ctx.s.payments.values(),
        ...made.filter((q) => q !== p && made.indexOf(q) < made.indexOf(p)),
      ].some(
        (q) =>
          q.agreementId === p.agreementId &&
          q.dueDate === p.dueDate &&
          q.externalId === p.externalId &&
          q.status !== "Declined" &&
          q.status !== "Rejected",
      );
      if (dup)
        return precondition(
          ctx.req,
          `a payment with external_id ${p.externalId} already exists for ${p.dueDate}`,
        );
    }
  }
  for (const p of made) {
    receivePayment(ctx.s, p);
    pending.push({ payment_id: p.id, external_id: p.externalId });
  }
  return { status: 202, body: { pending_payments: pending, rejected_payments: rejected } };
}

export function patchPayment(ctx: Ctx, p: SubsPayment): EmuResponse {
  const ops = jsonPatch(parseJson(ctx.req.body));
  const [op] = ops;
  if (ops.length !== 1 || op === undefined || op.op !== "replace" || op.path !== "/amount")
    throw new SubsInputError("the only change is replace /amount with a lower amount");
  changeAmount(p, amount(op.value, "amount"));
  return { status: 204 };
}

export function refund(ctx: Ctx, providerId: string, agreementId: string, paymentId: string): EmuResponse {
  const b = obj(parseJson(ctx.req.body), "body");
  const value = b.amount === undefined || b.amount === null ? 0 : amount(b.amount, "amount");
  if (b.amount !== undefined && b.amount !== null && value < 1)
    throw new SubsInputError("amount must be at least 0.01");
  const url = httpsUrl(b.status_callback_url, "status_callback_url");
  const externalId = optStr(b.external_id, "external_id");
  const r = {
    id: ctx.s.newId(),
    paymentId,
    agreementId,
    amount: value,
    externalId,
    callbackUrl: url,
    status: "Requested" as const,
    statusCode: -1,
  };
  processRefund(ctx.s, r, providerId);
  return {
    status: 202,
    body: { id: r.id, amount: formatAmount(r.amount), status_callback_url: url, external_id: externalId },
  };
}

export function attachment(ctx: Ctx, providerId: string, paymentId: string, pdf: boolean): EmuResponse {
  const p = ctx.s.payments.get(paymentId);
  const o = ctx.s.oneOffs.get(paymentId);
  if (!((p && p.providerId === providerId) || (o && o.providerId === providerId))) return NOT_FOUND;
  const M = ctx.req.method;
  const current = ctx.s.attachments.get(paymentId);
  if (pdf) {
    if (M !== "GET") return NOT_FOUND;
    if (!current?.pdf) return NOT_FOUND;
    return { status: 200, headers: { "content-type": "application/pdf" }, body: pdfOf(current.body) };
  }
  if (M === "PUT") {
    const parsed = parseAttachment(parseJson(ctx.req.body));
    ctx.s.attachments.set(paymentId, parsed);
    return { status: 204 };
  }
  if (M === "GET") return current ? { status: 200, body: current.body } : NOT_FOUND;
  if (M === "DELETE") {
    if (!current) return NOT_FOUND;
    ctx.s.attachments.delete(paymentId);
    return { status: 204 };
  }
  return NOT_FOUND;
}
