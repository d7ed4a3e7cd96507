/**
 * Money inside vendd is an integer number of minor units (øre, cents). Decimal strings and JSON numbers
 * exist only at the edges (config, HTTP bodies, serial lines) and are converted here, exactly.
 */

/** Integer minor units. Always a safe integer; never negative for prices and payments. */
export type Minor = number;

export class MoneyFormatError extends Error {
  override readonly name = "MoneyFormatError";
}

const DECIMAL = /^(\d{1,13})(?:\.(\d+))?$/;

/**
 * Parses a non-negative decimal string such as `"12.50"` or `"3"` into minor units.
 * @param decimals the currency's decimal places (2 for DKK and EUR); more fractional digits are refused.
 * @param exact when true, exactly `decimals` fractional digits are required (the older interface's rule).
 */
export function parseAmount(text: string, decimals = 2, exact = false): Minor {
  const m = DECIMAL.exec(text);
  if (!m) throw new MoneyFormatError(`not a decimal amount: ${JSON.stringify(text.slice(0, 40))}`);
  const whole = m[1] ?? "0";
  const frac = m[2] ?? "";
  if (frac.length > decimals) {
    throw new MoneyFormatError(`amount ${text} has more than ${decimals} decimals`);
  }
  if (exact && frac.length !== decimals) {
    throw new MoneyFormatError(`amount ${text} must have exactly ${decimals} decimals`);
  }
  const minor = Number(whole) * 10 ** decimals + Number(frac.padEnd(decimals, "0") || "0");
  if (!Number.isSafeInteger(minor)) throw new MoneyFormatError(`amount ${text} is out of range`);
  return minor;
}

/** A signed decimal string (`-12.50`) as minor units, exactly (the rules of parseAmount after the sign). */
export function parseSignedAmount(text: string, decimals = 2): Minor {
  return text.startsWith("-") ? -parseAmount(text.slice(1), decimals) : parseAmount(text, decimals);
}

/** Formats minor units as a decimal string with exactly `decimals` places: 1250 → `"12.50"`. */
export function formatAmount(minor: Minor, decimals = 2): string {
  assertMinor(minor);
  return formatSignedAmount(minor, decimals);
}

/**
 * The one money formatter: integer minor units (a sum may be a BigInt, a net may be negative) as a decimal
 * string with exactly `decimals` places, the sign kept: -1250 → `"-12.50"`, 1250n with 0 decimals → `"1250"`.
 */
export function formatSignedAmount(minor: number | bigint, decimals = 2): string {
  const sign = minor < 0 ? "-" : "";
  const abs = String(minor < 0 ? -BigInt(minor) : BigInt(minor)).padStart(decimals + 1, "0");
  return decimals === 0 ? `${sign}${abs}` : `${sign}${abs.slice(0, -decimals)}.${abs.slice(-decimals)}`;
}

/** A currency's exponent (its minor-unit digits: 2 for EUR and DKK, 0 for JPY; 2 when unknown). */
export function currencyDecimals(currency: string): number {
  try {
    return (
      new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ??
      2
    );
  } catch {
    return 2;
  }
}

/** Minor units in `currency` as a signed decimal string with the currency's exponent. */
export function formatMoney(minor: number | bigint, currency: string): string {
  return formatSignedAmount(minor, currencyDecimals(currency));
}

/**
 * Reads a JSON number (as `JSON.parse` produced it) as an amount, exactly: the shortest round-trip
 * string of the number must be a plain decimal with at most `decimals` places (V10 rule, pos-v10 §14).
 */
export function amountFromJson(value: unknown, decimals = 2): Minor {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new MoneyFormatError("amount must be a non-negative JSON number");
  }
  return parseAmount(String(value), decimals);
}

/**
 * The JSON number for an amount: 1250 → 12.5. Exact for amounts below 10^13 minor units, because the
 * shortest round-trip form of the nearest double to a decimal of at most 15 significant digits is that
 * decimal.
 */
export function amountToJson(minor: Minor, decimals = 2): number {
  return Number(formatAmount(minor, decimals));
}

/** The JSON number for a signed amount (a credit note's negative total): -1250 → -12.5, exactly as amountToJson. */
export function signedAmountToJson(minor: Minor, decimals = 2): number {
  return Number(formatSignedAmount(minor, decimals));
}

export function assertMinor(minor: Minor): void {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new MoneyFormatError(`invalid minor amount ${minor}`);
}
