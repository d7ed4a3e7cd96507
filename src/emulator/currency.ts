/**
 * Currencies of the emulator's merchants where an interface names none (the older point-of-sale interface,
 * seed 001, has no currency field): the merchant's country decides, as it does for the real service's
 * merchant agreements (DK → DKK, FI → EUR, NO → NOK, SE → SEK).
 */
const CURRENCY_BY_COUNTRY: Readonly<Record<string, string>> = { DK: "DKK", FI: "EUR", NO: "NOK", SE: "SEK" };

/** The currency of a country (ISO 3166-1 alpha-2), or null for a country the emulator does not serve. */
export function currencyOfCountry(country: string): string | null {
  return CURRENCY_BY_COUNTRY[country] ?? null;
}

/**
 * The currency of a merchant id: a VAT number (`DK12345678`) or the older interface's MerchantId
 * (`POSDK99999`) carries the country; anything else is a Danish merchant (the emulator's default).
 */
export function currencyOfMerchant(merchantId: string): string {
  const m = /^(?:POS)?([A-Z]{2})/.exec(merchantId);
  return (m && currencyOfCountry(m[1] ?? "")) ?? "DKK";
}
