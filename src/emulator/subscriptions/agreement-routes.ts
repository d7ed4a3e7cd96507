/**
 * The merchant's routes of agreements and one-off payments: create an agreement (with an initial one-off),
 * change or cancel it, and request a one-off payment on an Active agreement.
 */
import type { EmuResponse } from "../types.js";
import { cancelAgreement } from "./agreement-flow.js";
import { amount, jsonPatch, type Obj, optStr, parseJson, SubsInputError, str } from "./codec.js";
import { conflict, NOT_FOUND, precondition } from "./errors.js";
import type { Agreement, OneOff } from "./model.js";
import { requestOneOff } from "./oneoff-flow.js";
import { type OneOffInput, parseAgreement, parseOneOff } from "./parse.js";
import { type Ctx, mobilePayLink, requireCallbackUrl } from "./route-ctx.js";
import { SubsConflict } from "./state.js";

export function createAgreement(ctx: Ctx, providerId: string): EmuResponse {
  const input = parseAgreement(parseJson(ctx.req.body), ctx.deprecated);
  const now = ctx.now();
  const a: Agreement = {
    id: ctx.s.newId(),
    providerId,
    status: "Pending",
    amount: input.amount,
    currency: input.currency,
    country: input.country,
    plan: input.plan,
    description: input.description,
    frequency: input.frequency,
    externalId: input.externalId,
    expiresAt: now + input.expirationMinutes * 60_000,
    links: input.links,
    mobilePhoneNumber: input.mobilePhoneNumber,
    nextPaymentDate: input.nextPaymentDate,
    disableNotificationManagement: input.disableNotificationManagement,
    phone: null,
    oneOffId: null,
    deprecated: ctx.deprecated,
    createdAt: now,
  };
  ctx.s.agreements.set(a.id, a);
  const body: Obj = { id: a.id };
  if (input.oneOff) {
    const o = newOneOff(ctx, providerId, a.id, input.oneOff, now);
    a.oneOffId = o.id;
    requestOneOff(ctx.s, o);
    body.one_off_payment_id = o.id;
  }
  const q = new URLSearchParams({
    flow: "agreement",
    id: a.id,
    redirectUrl: a.links.userRedirect,
    countryCode: a.country,
  });
  if (a.mobilePhoneNumber) q.set("phone", a.mobilePhoneNumber);
  body.links = [mobilePayLink(ctx, q)];
  return { status: 201, body };
}

function newOneOff(
  ctx: Ctx,
  providerId: string,
  agreementId: string,
  input: OneOffInput,
  now: number,
): OneOff {
  return {
    id: ctx.s.newId(),
    providerId,
    agreementId,
    amount: input.amount,
    captured: 0,
    description: input.description,
    externalId: input.externalId,
    autoReserve: input.autoReserve,
    redirectUrl: input.redirectUrl,
    status: "Requested",
    expiresAt: now + input.expirationMinutes * 60_000,
    executedAt: null,
    instantTransfer: false,
    refunded: 0,
    invoice: input.invoice,
  };
}

export function patchAgreement(ctx: Ctx, providerId: string, agreementId: string): EmuResponse {
  const a = ctx.s.agreements.get(agreementId);
  if (a?.providerId !== providerId) return NOT_FOUND;
  const ops = jsonPatch(parseJson(ctx.req.body));
  const changes: (() => void)[] = [];
  let cancel = false;
  for (const op of ops) {
    if (op.op !== "replace") throw new SubsInputError("only op replace is supported");
    switch (op.path) {
      case "/amount": {
        const v = amount(op.value, "amount");
        changes.push(() => {
          a.amount = v;
        });
        break;
      }
      case "/plan": {
        const v = str(op.value, "plan", 30);
        changes.push(() => {
          a.plan = v;
        });
        break;
      }
      case "/description": {
        const v = optStr(op.value, "description", 60);
        changes.push(() => {
          a.description = v;
        });
        break;
      }
      case "/external_id": {
        const v = optStr(op.value, "external_id");
        changes.push(() => {
          a.externalId = v;
        });
        break;
      }
      case "/status":
        if (op.value !== "Canceled" && op.value !== "Cancelled")
          throw new SubsInputError("status can only be replaced by Canceled");
        cancel = true;
        break;
      default:
        throw new SubsInputError(`path ${op.path} cannot be changed`);
    }
  }
  if (a.status !== "Accepted" && a.status !== "Pending") {
    const msg = `agreement is ${a.status}`;
    return ctx.deprecated ? precondition(ctx.req, msg) : conflict(ctx.req, msg);
  }
  if (cancel) {
    if (a.status === "Pending") {
      const msg = "a Pending agreement cannot be canceled; it expires";
      return ctx.deprecated ? precondition(ctx.req, msg) : conflict(ctx.req, msg);
    }
    cancelAgreement(ctx.s, a, "merchant");
  }
  for (const c of changes) c();
  return { status: 204 };
}

export function createOneOff(ctx: Ctx, providerId: string, agreementId: string): EmuResponse {
  const a = ctx.s.agreements.get(agreementId);
  if (a?.providerId !== providerId) return NOT_FOUND;
  const input = parseOneOff(parseJson(ctx.req.body), false);
  if (a.status !== "Accepted") throw new SubsConflict(`agreement is ${a.status}, not Active`);
  requireCallbackUrl(ctx, providerId);
  const o = newOneOff(ctx, providerId, a.id, input, ctx.now());
  requestOneOff(ctx.s, o);
  const q = new URLSearchParams({
    flow: "oneoff",
    id: o.id,
    redirectUrl: input.redirectUrl ?? "",
    countryCode: a.country,
  });
  return { status: 201, body: { id: o.id, links: [mobilePayLink(ctx, q)] } };
}
