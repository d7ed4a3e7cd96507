/**
 * An online-payment error answer (seed 002: "error statuses and bodies: not shown"; this emulator's shape):
 * `{code, message, correlationId, field?}`.
 */
export class OnlineError extends Error {
  override readonly name = "OnlineError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A field that breaks its rule: `400 ValidationError` naming the field. */
export function invalid(field: string, message: string): never {
  throw new OnlineError(400, "ValidationError", `${field} ${message}`, field);
}

export function conflict(code: string, message: string): never {
  throw new OnlineError(409, code, message);
}

export function notFound(what: string): never {
  throw new OnlineError(404, "NotFound", `${what} not found`);
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ALPHA2 = /^[A-Z]{2}$/;
const INT32_MAX = 2_147_483_647;
/** Seed 002 §Online payment: initiate body, currencyCode. */
export const CURRENCIES = [
  "DKK",
  "EUR",
  "NOK",
  "SEK",
  "USD",
  "GBP",
  "208",
  "978",
  "578",
  "752",
  "840",
  "826",
];
const ALPHA_OF_NUMERIC: Readonly<Record<string, string>> = {
  "208": "DKK",
  "978": "EUR",
  "578": "NOK",
  "752": "SEK",
  "840": "USD",
  "826": "GBP",
};

/** The alphabetic ISO 4217 code of an accepted `currencyCode` (numeric codes mapped, e.g. 978 → EUR). */
export function alphaCurrency(code: string): string {
  return ALPHA_OF_NUMERIC[code] ?? code;
}
/** Billing currencies of a merchant ("allowed values: not shown"; this emulator's choice). */
export const BILLING_CURRENCIES = ["DKK", "EUR", "NOK", "SEK"];
/** Card type names ("not shown"; this emulator's choice). */
export const CARD_TYPES = [
  "VISA-CREDIT",
  "VISA-DEBIT",
  "VISA-ELECTRON",
  "MC-CREDIT",
  "MC-DEBIT",
  "MAESTRO",
  "DANKORT",
];

type Body = Record<string, unknown>;

export function only(body: Body, allowed: readonly string[]): void {
  for (const k of Object.keys(body))
    if (!allowed.includes(k)) invalid(k.slice(0, 40), "is not a known field");
}

export function str(body: Body, key: string, min: number, max: number): string {
  const v = body[key];
  if (typeof v !== "string" || v.length < min || v.length > max)
    invalid(key, `must be a string of ${min} to ${max} characters`);
  return v;
}

export function int(body: Body, key: string, min: number, max: number): number {
  const v = body[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max)
    invalid(key, `must be an integer from ${min} to ${max}`);
  return v;
}

export function optBool(body: Body, key: string): boolean | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "boolean") invalid(key, "must be a boolean");
  return v;
}

/** A fully qualified https URL (seed: "All URLs must be https with TLS 1.2 or better"). */
export function httpsUrl(body: Body, key: string, required: boolean, max = 2048): string | null {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) invalid(key, "is required");
    return null;
  }
  if (typeof v !== "string" || v.length > max) invalid(key, "must be an https URL");
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    invalid(key, "must be a fully qualified URL");
  }
  if (u.protocol !== "https:") invalid(key, "must use https");
  return v;
}

/** An ISO 8601 date-time with offset or Z; ms since the epoch. */
export function dateTime(body: Body, key: string, required: boolean): number | null {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) invalid(key, "is required");
    return null;
  }
  if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v))
    invalid(key, "must be an ISO 8601 date-time with offset");
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) invalid(key, "must be a valid date-time");
  return ms;
}

export interface MerchantInput {
  externalId: string;
  name: string;
  billingCurrency: string;
  countryCode: string;
  vatNumber: string;
  merchantCategoryCode: number;
}

/** Create merchant body: the six fields, all required (seed 002 §Online payment: merchant). */
export function parseMerchant(body: Body): MerchantInput {
  only(body, ["externalId", "name", "billingCurrency", "countryCode", "vatNumber", "merchantCategoryCode"]);
  const billingCurrency = str(body, "billingCurrency", 3, 3);
  if (!BILLING_CURRENCIES.includes(billingCurrency))
    invalid("billingCurrency", `must be one of ${BILLING_CURRENCIES.join(", ")}`);
  const countryCode = str(body, "countryCode", 2, 2);
  if (!ALPHA2.test(countryCode)) invalid("countryCode", "must be ISO 3166-1 alpha-2");
  return {
    externalId: str(body, "externalId", 1, 100),
    name: str(body, "name", 1, 255),
    billingCurrency,
    countryCode,
    vatNumber: str(body, "vatNumber", 1, 50),
    merchantCategoryCode: int(body, "merchantCategoryCode", 1, 9999),
  };
}

export interface CardTypeInput {
  name: string;
  encryptedPanCallbackUrl: string | null;
  tokenCallbackUrl: string | null;
}

export interface InitiateInput {
  allowedCardTypes: CardTypeInput[];
  amount: number;
  currencyCode: string;
  merchantId: string;
  merchantLogoUrl: string;
  merchantName: string;
  merchantOrderId: string;
  merchantUrl: string;
  pspReferenceId: string;
  publicKeyId: number;
  redirectFromServiceUrl: string;
  failedPaymentCallbackUrl: string | null;
  isCheckout: boolean;
  addressCallbackUrl: string | null;
  deliveryAddressAllowed: boolean | null;
  deliveryAddressDisallowedReasonCode: number | null;
  deliveryLimitedTo: string[];
  validUntil: number | null;
  autoCapture: boolean;
  preferInternationalSchemePartOfCobrandedCard: boolean;
  customerLanguageCode: string | null;
  minimumServiceUserAge: number | null;
}

const INITIATE_FIELDS = [
  "allowedCardTypes",
  "amount",
  "currencyCode",
  "merchantId",
  "merchantLogoUrl",
  "merchantName",
  "merchantOrderId",
  "merchantUrl",
  "pspReferenceId",
  "publicKeyId",
  "redirectFromServiceUrl",
  "failedPaymentCallbackUrl",
  "isCheckout",
  "addressCallbackUrl",
  "deliveryAddressAllowed",
  "deliveryAddressDisallowedReasonCode",
  "deliveryLimitedTo",
  "validUntil",
  "autoCapture",
  "preferInternationalSchemePartOfCobrandedCard",
  "customerLanguageCode",
  "minimumServiceUserAge",
];

function cardTypes(v: unknown): CardTypeInput[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > CARD_TYPES.length)
    invalid("allowedCardTypes", "must list 1 or more card types");
  const seen = new Set<string>();
  return v.map((x, i) => {
    const at = `allowedCardTypes[${i}]`;
    if (typeof x !== "object" || x === null || Array.isArray(x)) invalid(at, "must be an object");
    const o = x as Body;
    for (const k of Object.keys(o))
      if (!["name", "encryptedPanCallbackUrl", "tokenCallbackUrl"].includes(k))
        invalid(`${at}.${k.slice(0, 40)}`, "is not a known field");
    if (typeof o.name !== "string" || !CARD_TYPES.includes(o.name) || seen.has(o.name))
      invalid(`${at}.name`, `must be one of ${CARD_TYPES.join(", ")}, once`);
    seen.add(o.name);
    const pan = httpsUrl(o, "encryptedPanCallbackUrl", false);
    const token = httpsUrl(o, "tokenCallbackUrl", false);
    if (pan === null && token === null) invalid(at, "needs encryptedPanCallbackUrl or tokenCallbackUrl");
    return { name: o.name, encryptedPanCallbackUrl: pan, tokenCallbackUrl: token };
  });
}

/** The initiate body with every field rule of seed 002 §Online payment: initiate body. */
export function parseInitiate(body: Body, now: number): InitiateInput {
  only(body, INITIATE_FIELDS);
  const amount = body.amount;
  if (typeof amount !== "number" || !Number.isSafeInteger(amount) || amount <= 0)
    invalid("amount", "must be a positive integer of minor units");
  const currencyCode = body.currencyCode;
  if (typeof currencyCode !== "string" || !CURRENCIES.includes(currencyCode))
    invalid("currencyCode", `must be one of ${CURRENCIES.join(", ")}`);
  const merchantId = body.merchantId;
  if (typeof merchantId !== "string" || !UUID.test(merchantId)) invalid("merchantId", "must be a uuid");
  const logo = httpsUrl(body, "merchantLogoUrl", true) as string;
  if (!/\.(png|jpe?g)$/i.test(new URL(logo).pathname))
    invalid("merchantLogoUrl", "must be a png or jpg image");
  const validUntil = dateTime(body, "validUntil", false);
  if (validUntil !== null && validUntil <= now) invalid("validUntil", "must be in the future");
  const isCheckout = optBool(body, "isCheckout") ?? false;
  const addressCallbackUrl = httpsUrl(body, "addressCallbackUrl", false);
  if (isCheckout && addressCallbackUrl === null)
    invalid("addressCallbackUrl", "is required for a checkout payment");
  const limited = body.deliveryLimitedTo;
  if (
    limited !== undefined &&
    limited !== null &&
    (!Array.isArray(limited) || !limited.every((c) => typeof c === "string" && ALPHA2.test(c)))
  )
    invalid("deliveryLimitedTo", "must be a list of ISO 3166-1 alpha-2 codes");
  const reason = body.deliveryAddressDisallowedReasonCode;
  if (
    reason !== undefined &&
    reason !== null &&
    (typeof reason !== "number" || !Number.isInteger(reason) || Math.abs(reason) > INT32_MAX)
  )
    invalid("deliveryAddressDisallowedReasonCode", "must be an int32 or null");
  const lang = body.customerLanguageCode;
  if (
    lang !== undefined &&
    lang !== null &&
    (typeof lang !== "string" || !/^[A-Za-z]{2}([-_][A-Za-z]{2})?$/.test(lang))
  )
    invalid("customerLanguageCode", "must be a language code such as da or fi");
  const age = body.minimumServiceUserAge;
  if (
    age !== undefined &&
    age !== null &&
    (typeof age !== "number" || !Number.isInteger(age) || age < 0 || age > 150)
  )
    invalid("minimumServiceUserAge", "must be an integer from 0 to 150 or null");
  return {
    allowedCardTypes: cardTypes(body.allowedCardTypes),
    amount,
    currencyCode,
    merchantId: merchantId.toLowerCase(),
    merchantLogoUrl: logo,
    merchantName: str(body, "merchantName", 1, 255),
    merchantOrderId: str(body, "merchantOrderId", 1, 255),
    merchantUrl: str(body, "merchantUrl", 1, 150),
    pspReferenceId: str(body, "pspReferenceId", 1, 50),
    publicKeyId: int(body, "publicKeyId", -INT32_MAX - 1, INT32_MAX),
    redirectFromServiceUrl: httpsUrl(body, "redirectFromServiceUrl", true) as string,
    failedPaymentCallbackUrl: httpsUrl(body, "failedPaymentCallbackUrl", false),
    isCheckout,
    addressCallbackUrl,
    deliveryAddressAllowed: optBool(body, "deliveryAddressAllowed"),
    deliveryAddressDisallowedReasonCode: (reason as number | null | undefined) ?? null,
    deliveryLimitedTo: (limited as string[] | null | undefined) ?? [],
    validUntil,
    autoCapture: optBool(body, "autoCapture") ?? false,
    preferInternationalSchemePartOfCobrandedCard:
      optBool(body, "preferInternationalSchemePartOfCobrandedCard") ?? false,
    customerLanguageCode: (lang as string | null | undefined) ?? null,
    minimumServiceUserAge: (age as number | null | undefined) ?? null,
  };
}
