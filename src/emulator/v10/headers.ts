import type { EmuRequest } from "../types.js";
import type { TokenService } from "./auth.js";
import { fail } from "./errors.js";
import { isValidText, VAT, VERSION } from "./validate.js";

/** Who is calling: the integrator of the token and the merchant it acts for. */
export interface Caller {
  clientId: string;
  /** Merchant VAT from the `x-service-merchant-vat-number` header. */
  vat: string;
}

const VAT_HEADER = "x-service-merchant-vat-number";
const NAME_HEADER = "x-service-client-system-name";
const VERSION_HEADER = "x-service-client-system-version";
export const IDEMPOTENCY_HEADER = "x-service-idempotency-key";

/**
 * How often each header occurs. Node joins repeated custom headers with ", ", so duplicates are counted
 * from the raw list (pos-v10 §3 emulator note).
 */
function occurrences(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const h = rawHeaders[i];
    if (h !== undefined && h.length === name.length && h.toLowerCase() === name) n += 1;
  }
  return n;
}

function single(
  req: EmuRequest,
  name: string,
  codes: [string, string, string],
  valid: (v: string) => boolean,
): string {
  const n = occurrences(req.rawHeaders, name);
  const [missing, duplicated, invalid] = codes;
  if (n === 0) fail(400, missing, `header ${name} is missing`);
  if (n > 1) fail(400, duplicated, `header ${name} is duplicated`);
  const value = req.headers[name];
  if (typeof value !== "string" || !valid(value)) fail(400, invalid, `header ${name} is invalid`);
  return value;
}

/**
 * The checks every V10 call starts with, in the order of pos-v10 §11: the bearer token (401 without body),
 * then the three `x-service-…` headers (1151-1161, §3), the token's `merchant_vat` claim (1182), and a VAT
 * header that contradicts the claim (1159).
 */
export function checkCall(req: EmuRequest, tokens: TokenService): Caller {
  const claims = tokens.verifyRequest(req);
  if (claims === null) fail(401, null, "unauthorized");
  const vat = single(req, VAT_HEADER, ["1151", "1155", "1159"], (v) => VAT.test(v));
  single(req, NAME_HEADER, ["1152", "1156", "1160"], (v) => isValidText(v, 36));
  single(req, VERSION_HEADER, ["1153", "1157", "1161"], (v) => VERSION.test(v));
  if (claims.merchantVat !== null) {
    if (!VAT.test(claims.merchantVat)) fail(400, "1182", "the token's merchant_vat claim is invalid");
    if (claims.merchantVat !== vat)
      fail(400, "1159", `header ${VAT_HEADER} differs from the token's merchant_vat`);
  }
  return { clientId: claims.clientId, vat };
}

/** The idempotency key of a creating POST: missing 1164, duplicated 1163, invalid 1162 (pos-v10 §3, §9). */
export function idempotencyKey(req: EmuRequest): string {
  return single(req, IDEMPOTENCY_HEADER, ["1164", "1163", "1162"], (v) => isValidText(v, 36));
}
