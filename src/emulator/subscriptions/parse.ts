import type { Minor } from "../../core/money.js";
import { amount, bool, date, httpsUrl, int, type Obj, obj, optStr, SubsInputError, str } from "./codec.js";
import type { Country, Currency } from "./model.js";

export interface AgreementInput {
  amount: Minor | null;
  currency: Currency;
  country: Country;
  plan: string;
  description: string | null;
  frequency: number;
  externalId: string | null;
  expirationMinutes: number;
  links: { userRedirect: string; success: string; cancel: string };
  mobilePhoneNumber: string | null;
  nextPaymentDate: string | null;
  disableNotificationManagement: boolean;
  oneOff: OneOffInput | null;
}

export interface OneOffInput {
  amount: Minor;
  description: string;
  externalId: string;
  expirationMinutes: number;
  autoReserve: boolean;
  redirectUrl: string | null;
  invoice: unknown;
}

const CURRENT_FREQ = [1, 2, 4, 12, 26, 52, 365, 0];
const DEPRECATED_FREQ = [1, 2, 4, 12, 26];

function rangeInt(v: unknown, what: string, min: number, max: number): number {
  const n = int(v, what);
  if (n < min || n > max) throw new SubsInputError(`${what} must be between ${min} and ${max}`);
  return n;
}

/** The `links` of an agreement request: exactly three, one of each rel, https hrefs. */
function agreementLinks(v: unknown): AgreementInput["links"] {
  if (!Array.isArray(v) || v.length !== 3)
    throw new SubsInputError(
      "links must hold exactly three entries: user-redirect, success-callback, cancel-callback",
    );
  const by = new Map<string, string>();
  v.forEach((x, i) => {
    const o = obj(x, `links[${i}]`);
    const rel = str(o.rel, `links[${i}].rel`);
    if (!["user-redirect", "success-callback", "cancel-callback"].includes(rel) || by.has(rel))
      throw new SubsInputError(
        `links[${i}].rel must be one each of user-redirect, success-callback, cancel-callback`,
      );
    by.set(rel, httpsUrl(o.href, `links[${i}].href`));
  });
  return {
    userRedirect: by.get("user-redirect") ?? "",
    success: by.get("success-callback") ?? "",
    cancel: by.get("cancel-callback") ?? "",
  };
}

/** Validates an agreement request body (400 on the first violation). */
export function parseAgreement(body: unknown, deprecated: boolean): AgreementInput {
  const o = obj(body, "body");
  const currency = str(o.currency, "currency");
  const country = str(o.country_code, "country_code");
  if (currency !== "DKK" && currency !== "EUR") throw new SubsInputError("currency must be DKK or EUR");
  if (country !== "DK" && country !== "FI") throw new SubsInputError("country_code must be DK or FI");
  if ((currency === "DKK") !== (country === "DK"))
    throw new SubsInputError("currency must pair with country_code (DKK with DK, EUR with FI)");
  const freq = o.frequency === undefined ? 12 : int(o.frequency, "frequency");
  if (!(deprecated ? DEPRECATED_FREQ : CURRENT_FREQ).includes(freq))
    throw new SubsInputError(
      `frequency must be one of ${(deprecated ? DEPRECATED_FREQ : CURRENT_FREQ).join(", ")}`,
    );
  if (deprecated && (o.next_payment_date !== undefined || o.one_off_payment !== undefined))
    throw new SubsInputError(
      "next_payment_date and one_off_payment are not part of the deprecated interface",
    );
  const phone = optStr(o.mobile_phone_number, "mobile_phone_number");
  if (phone !== null && !/^\d{6,15}$/.test(phone))
    throw new SubsInputError("mobile_phone_number must be digits with the country code");
  const input: AgreementInput = {
    amount: o.amount === undefined || o.amount === null ? null : amount(o.amount, "amount"),
    currency,
    country,
    plan: str(o.plan, "plan", 30),
    description: optStr(o.description, "description", 60),
    frequency: freq,
    externalId: optStr(o.external_id, "external_id"),
    expirationMinutes: rangeInt(o.expiration_timeout_minutes, "expiration_timeout_minutes", 5, 20160),
    links: agreementLinks(o.links),
    mobilePhoneNumber: phone,
    nextPaymentDate:
      o.next_payment_date === undefined ? null : date(o.next_payment_date, "next_payment_date"),
    disableNotificationManagement:
      o.disable_notification_management === undefined
        ? false
        : bool(o.disable_notification_management, "disable_notification_management"),
    oneOff: o.one_off_payment === undefined ? null : parseOneOff(o.one_off_payment, true),
  };
  return input;
}

/** A one-off request body; `inAgreement` is the `one_off_payment` object (no links, no auto_reserve). */
export function parseOneOff(body: unknown, inAgreement: boolean): OneOffInput {
  const o: Obj = obj(body, inAgreement ? "one_off_payment" : "body");
  const at = inAgreement ? "one_off_payment." : "";
  const value = amount(o.amount, `${at}amount`);
  if (value <= 0) throw new SubsInputError(`${at}amount must be above 0.00`);
  let redirectUrl: string | null = null;
  if (!inAgreement) {
    if (!Array.isArray(o.links) || o.links.length !== 1)
      throw new SubsInputError("links must hold exactly one entry with rel user-redirect");
    const l = obj(o.links[0], "links[0]");
    if (l.rel !== "user-redirect") throw new SubsInputError("links[0].rel must be user-redirect");
    redirectUrl = httpsUrl(l.href, "links[0].href");
  }
  return {
    amount: value,
    description: str(o.description, `${at}description`, 60),
    externalId: str(o.external_id, `${at}external_id`, 64),
    expirationMinutes:
      o.expiration_timeout_minutes === undefined
        ? 1440
        : rangeInt(o.expiration_timeout_minutes, `${at}expiration_timeout_minutes`, 1, 181440),
    autoReserve:
      !inAgreement && o.auto_reserve !== undefined && o.auto_reserve !== null
        ? bool(o.auto_reserve, "auto_reserve")
        : false,
    redirectUrl,
    invoice: o.invoice ?? null,
  };
}

export interface PaymentInput {
  agreementId: string;
  amount: Minor;
  dueDate: string;
  externalId: string;
  description: string;
  graceDays: number;
  invoice: unknown;
}

/** One element of a payment-request array: structure only (business rules are validated afterwards). */
export function parsePayment(value: unknown, deprecated: boolean): PaymentInput {
  const o = obj(value, "payment");
  const value2 = amount(o.amount, "amount");
  if (deprecated && value2 <= 0) throw new SubsInputError("amount must be above 0.00");
  if (o.grace_period_days !== undefined && deprecated)
    throw new SubsInputError("grace_period_days is not part of the deprecated interface");
  return {
    agreementId: str(o.agreement_id, "agreement_id"),
    amount: value2,
    dueDate: date(o.due_date, "due_date"),
    externalId: str(o.external_id, "external_id", deprecated ? 30 : 64),
    description: str(o.description, "description", 60),
    graceDays:
      o.grace_period_days === undefined ? 0 : rangeInt(o.grace_period_days, "grace_period_days", 1, 3),
    invoice: o.invoice ?? null,
  };
}

/** Attachment V2 body (seed 000 §Payment attachment V2). */
export function parseAttachment(body: unknown): { body: Obj; pdf: boolean } {
  const o = obj(body, "body");
  const url =
    o.external_attachment_url === undefined
      ? null
      : httpsUrl(o.external_attachment_url, "external_attachment_url");
  const pdf = o.generate_pdf === undefined ? false : bool(o.generate_pdf, "generate_pdf");
  if (pdf && url !== null)
    throw new SubsInputError("generate_pdf cannot be true when external_attachment_url is given");
  const d = obj(o.attachment_details, "attachment_details");
  amount(
    Math.abs(typeof d.total_amount === "number" ? d.total_amount : Number.NaN),
    "attachment_details.total_amount",
  );
  if (d.document_title !== undefined) str(d.document_title, "attachment_details.document_title", 60);
  if (d.payment_reference !== undefined) str(d.payment_reference, "attachment_details.payment_reference", 60);
  if (!Array.isArray(d.articles) || d.articles.length === 0)
    throw new SubsInputError("attachment_details.articles must hold at least one article");
  d.articles.forEach((x, i) => {
    const a = obj(x, `articles[${i}]`);
    str(a.article_description, `articles[${i}].article_description`);
    if (typeof a.total_price_including_vat !== "number" || !Number.isFinite(a.total_price_including_vat))
      throw new SubsInputError(`articles[${i}].total_price_including_vat must be a decimal`);
  });
  return { body: o, pdf };
}
