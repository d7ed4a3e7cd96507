import { DAY_MS, hasDayShape } from "../../core/days.js";
import { type Minor, parseSignedAmount, signedAmountToJson } from "../../core/money.js";

/** The `error` class of the invoice error answer (seed 002 §Invoice error answer). */
export type InvoiceErrorClass = "DomainError" | "InputError" | "ServerError";

/**
 * An invoice error answer, thrown inside a route: `{correlation_id, error, error_code, error_description}`.
 * The codes are this emulator's (the seed publishes only 10106 and 10504 as examples): see codes below.
 */
export class InvoiceError extends Error {
  override readonly name = "InvoiceError";
  constructor(
    readonly status: number,
    readonly error: InvoiceErrorClass,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Input validation failure (400 InputError) with the field's code. */
export function inputError(code: string, message: string): never {
  throw new InvoiceError(400, "InputError", code, message);
}

/** Business-rule failure (400 DomainError). */
export function domainError(code: string, message: string): never {
  throw new InvoiceError(400, "DomainError", code, message);
}

/**
 * Validation codes of this emulator (seed: "the complete list: not shown"; 10106 and 10504 are the seed's
 * examples and keep their example meaning: an Invalid callback and a batch rejection).
 */
export const CODES = {
  body: "10001",
  unknownField: "10002",
  issuer: "10101",
  issuerNotEnabled: "10102",
  alias: "10103",
  aliasType: "10104",
  totalAmount: "10105",
  consumerNotUser: "10106",
  totalVat: "10107",
  country: "10108",
  currency: "10109",
  invoiceNumber: "10110",
  date: "10111",
  dueDate: "10112",
  paymentReference: "10113",
  invoiceUrl: "10114",
  articlesMissing: "10115",
  article: "10116",
  articlesTotal: "10117",
  articlesVat: "10118",
  articleVatRate: "10119",
  optionalField: "10120",
  duplicateNumber: "10504",
  batch: "10505",
} as const;

export type InvoiceKind = "direct" | "link";

export interface InvoiceArticle {
  ArticleNumber: string;
  ArticleDescription: string;
  VATRate: number;
  TotalVATAmount: Minor;
  TotalPriceIncludingVat: Minor;
  Unit: string;
  Quantity: number;
  PricePerUnit: number;
  PriceReduction: number;
  PriceDiscount: number;
  Bonus: number;
}

/** A validated invoice input (amounts in minor units). */
export interface InvoiceInput {
  InvoiceIssuer: string;
  phone: string | null;
  ConsumerName: string | null;
  TotalAmount: Minor;
  TotalVatAmount: Minor;
  CountryCode: "DK" | "FI";
  CurrencyCode: "DKK" | "EUR";
  ConsumerAddressLines: string[];
  DeliveryAddressLines: string[];
  InvoiceNumber: string;
  IssueDate: string;
  OrderDate: string;
  DeliveryDate: string;
  DueDate: string;
  Comment: string | null;
  MerchantContactName: string | null;
  MerchantOrderNumber: string | null;
  BuyerOrderNumber: string | null;
  PaymentReference: string | null;
  InvoiceUrl: string | null;
  InvoiceArticles: InvoiceArticle[];
}

const FIELDS = [
  "InvoiceIssuer",
  "ConsumerAlias",
  "ConsumerName",
  "TotalAmount",
  "TotalVatAmount",
  "CountryCode",
  "CurrencyCode",
  "ConsumerAddressLines",
  "DeliveryAddressLines",
  "InvoiceNumber",
  "IssueDate",
  "OrderDate",
  "DeliveryDate",
  "DueDate",
  "Comment",
  "MerchantContactName",
  "MerchantOrderNumber",
  "BuyerOrderNumber",
  "PaymentReference",
  "InvoiceUrl",
  "InvoiceArticles",
];
const ARTICLE_FIELDS = [
  "ArticleNumber",
  "ArticleDescription",
  "VATRate",
  "TotalVATAmount",
  "TotalPriceIncludingVat",
  "Unit",
  "Quantity",
  "PricePerUnit",
  "PriceReduction",
  "PriceDiscount",
  "Bonus",
];

export const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const PHONE = /^\+\d{6,15}$/;

/** `YYYY-MM-DD` of an emulator time (UTC). */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Start (00:00 UTC) of a valid `YYYY-MM-DD`, ms; NaN when invalid. */
export function startOfDay(date: string): number {
  if (!hasDayShape(date)) return Number.NaN;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isFinite(ms) && dayOf(ms) === date ? ms : Number.NaN;
}

/** The date `days` after `date`. */
export function addDays(date: string, days: number): string {
  return dayOf(startOfDay(date) + days * DAY_MS);
}

/** A JSON number with at most two decimals → minor units, exactly (via its shortest text form). */
export function toMinor(value: unknown): Minor | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  try {
    return parseSignedAmount(String(value), 2);
  } catch {
    return null;
  }
}

/** Minor units → a JSON decimal number (two decimals at most). */
export function toDecimal(minor: number): number {
  return signedAmountToJson(minor, 2);
}

function optString(v: Record<string, unknown>, key: string, max = 1000): string | null {
  const x = v[key];
  if (x === undefined || x === null) return null;
  if (typeof x !== "string" || x.length > max) inputError(CODES.optionalField, `${key} must be a string`);
  return x;
}

function lines(v: Record<string, unknown>, key: string): string[] {
  const x = v[key];
  if (x === undefined || x === null) return [];
  if (!Array.isArray(x) || x.length > 10 || !x.every((l) => typeof l === "string"))
    inputError(CODES.optionalField, `${key} must be a list of strings`);
  return x as string[];
}

function date(v: Record<string, unknown>, key: string): string {
  const x = v[key];
  if (typeof x !== "string" || Number.isNaN(startOfDay(x)))
    inputError(CODES.date, `${key} must be a date YYYY-MM-DD`);
  return x;
}

function text(v: unknown, code: string, what: string, max = 255): string {
  if (typeof v !== "string" || v.trim() === "" || v.length > max) inputError(code, `${what} is required`);
  return v;
}

function num(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) inputError(CODES.article, `${what} must be a number`);
  return v;
}

function article(x: unknown, i: number): InvoiceArticle {
  const at = `InvoiceArticles[${i}]`;
  if (typeof x !== "object" || x === null || Array.isArray(x))
    inputError(CODES.article, `${at} must be an object`);
  const a = x as Record<string, unknown>;
  for (const k of Object.keys(a))
    if (!ARTICLE_FIELDS.includes(k)) inputError(CODES.unknownField, `${at}: unknown field ${k.slice(0, 40)}`);
  const vat = toMinor(a.TotalVATAmount);
  const total = toMinor(a.TotalPriceIncludingVat);
  if (vat === null || vat < 0)
    inputError(CODES.article, `${at}.TotalVATAmount must be a decimal >= 0, 2 places`);
  if (total === null) inputError(CODES.article, `${at}.TotalPriceIncludingVat must be a decimal, 2 places`);
  const rate = num(a.VATRate, `${at}.VATRate`);
  if (rate < 0 || rate > 100) inputError(CODES.article, `${at}.VATRate must be 0 to 100`);
  return {
    ArticleNumber: text(a.ArticleNumber, CODES.article, `${at}.ArticleNumber`),
    ArticleDescription: text(a.ArticleDescription, CODES.article, `${at}.ArticleDescription`, 1000),
    VATRate: rate,
    TotalVATAmount: vat,
    TotalPriceIncludingVat: total,
    Unit: text(a.Unit, CODES.article, `${at}.Unit`),
    Quantity: num(a.Quantity, `${at}.Quantity`),
    PricePerUnit: num(a.PricePerUnit, `${at}.PricePerUnit`),
    PriceReduction: num(a.PriceReduction, `${at}.PriceReduction`),
    PriceDiscount: num(a.PriceDiscount, `${at}.PriceDiscount`),
    Bonus: num(a.Bonus, `${at}.Bonus`),
  };
}

/**
 * The field rules of seed 002 §Invoice (shape, types, sums, VAT). Rules that need the world (issuer, app
 * user, DueDate window, duplicate number) are checked by the service: see `checkBusiness`.
 */
export function parseInvoice(value: unknown, kind: InvoiceKind): InvoiceInput {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    inputError(CODES.body, "an invoice must be a JSON object");
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v))
    if (!FIELDS.includes(k)) inputError(CODES.unknownField, `unknown field ${k.slice(0, 40)}`);
  if (typeof v.InvoiceIssuer !== "string" || !GUID.test(v.InvoiceIssuer))
    inputError(CODES.issuer, "InvoiceIssuer must be a guid");
  let phone: string | null = null;
  if (v.ConsumerAlias === undefined || v.ConsumerAlias === null) {
    if (kind === "direct") inputError(CODES.alias, "ConsumerAlias is required for InvoiceDirect");
  } else {
    const a = v.ConsumerAlias;
    if (typeof a !== "object" || a === null || Array.isArray(a))
      inputError(CODES.alias, "ConsumerAlias must be {Alias, AliasType}");
    const { Alias, AliasType, ...rest } = a as Record<string, unknown>;
    if (Object.keys(rest).length > 0) inputError(CODES.unknownField, "ConsumerAlias has unknown fields");
    if (AliasType !== "Phone") inputError(CODES.aliasType, "ConsumerAlias.AliasType must be Phone");
    if (typeof Alias !== "string" || !PHONE.test(Alias))
      inputError(CODES.alias, "ConsumerAlias.Alias must be + country code and number");
    phone = Alias;
  }
  const totalAmount = toMinor(v.TotalAmount);
  if (totalAmount === null || totalAmount <= 0)
    inputError(CODES.totalAmount, "TotalAmount must be a decimal > 0.00 with at most 2 places");
  const totalVat = toMinor(v.TotalVatAmount);
  if (totalVat === null || totalVat < 0 || totalVat > totalAmount)
    inputError(CODES.totalVat, "TotalVatAmount must be a decimal >= 0, at most TotalAmount");
  if (v.CountryCode !== "DK" && v.CountryCode !== "FI")
    inputError(CODES.country, "CountryCode must be DK or FI");
  const currency = v.CountryCode === "DK" ? "DKK" : "EUR";
  if (v.CurrencyCode !== currency)
    inputError(CODES.currency, `CurrencyCode must be ${currency} for CountryCode ${v.CountryCode}`);
  const invoiceNumber = text(v.InvoiceNumber, CODES.invoiceNumber, "InvoiceNumber");
  const issueDate = date(v, "IssueDate");
  const orderDate = date(v, "OrderDate");
  const deliveryDate = date(v, "DeliveryDate");
  const dueDate = date(v, "DueDate");
  const paymentReference = optString(v, "PaymentReference", 10_000);
  if (paymentReference !== null && paymentReference.length > 60)
    inputError(CODES.paymentReference, "PaymentReference is at most 60 characters");
  const invoiceUrl = optString(v, "InvoiceUrl", 2048);
  if (invoiceUrl !== null && !/^https?:\/\/[^\s]+$/.test(invoiceUrl))
    inputError(CODES.invoiceUrl, "InvoiceUrl must be an absolute http(s) URL");
  if (!Array.isArray(v.InvoiceArticles) || v.InvoiceArticles.length === 0)
    inputError(CODES.articlesMissing, "InvoiceArticles must hold at least one article");
  if (v.InvoiceArticles.length > 1000) inputError(CODES.articlesMissing, "at most 1000 InvoiceArticles");
  const articles = v.InvoiceArticles.map(article);
  const sumTotal = articles.reduce((s, a) => s + a.TotalPriceIncludingVat, 0);
  const sumVat = articles.reduce((s, a) => s + a.TotalVATAmount, 0);
  if (sumTotal !== totalAmount)
    domainError(CODES.articlesTotal, "the articles' TotalPriceIncludingVat do not add up to TotalAmount");
  if (sumVat !== totalVat)
    domainError(CODES.articlesVat, "the articles' TotalVATAmount do not add up to TotalVatAmount");
  for (const [i, a] of articles.entries()) {
    const expected = Math.round((a.TotalPriceIncludingVat * a.VATRate) / (100 + a.VATRate));
    if (Math.abs(expected - a.TotalVATAmount) > 1)
      domainError(
        CODES.articleVatRate,
        `InvoiceArticles[${i}].TotalVATAmount is not VATRate applied to TotalPriceIncludingVat`,
      );
  }
  return {
    InvoiceIssuer: v.InvoiceIssuer.toLowerCase(),
    phone,
    ConsumerName: optString(v, "ConsumerName"),
    TotalAmount: totalAmount,
    TotalVatAmount: totalVat,
    CountryCode: v.CountryCode,
    CurrencyCode: currency,
    ConsumerAddressLines: lines(v, "ConsumerAddressLines"),
    DeliveryAddressLines: lines(v, "DeliveryAddressLines"),
    InvoiceNumber: invoiceNumber,
    IssueDate: issueDate,
    OrderDate: orderDate,
    DeliveryDate: deliveryDate,
    DueDate: dueDate,
    Comment: optString(v, "Comment"),
    MerchantContactName: optString(v, "MerchantContactName"),
    MerchantOrderNumber: optString(v, "MerchantOrderNumber"),
    BuyerOrderNumber: optString(v, "BuyerOrderNumber"),
    PaymentReference: paymentReference,
    InvoiceUrl: invoiceUrl,
    InvoiceArticles: articles,
  };
}
