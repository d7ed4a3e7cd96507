import { describe, expect, it } from "vitest";
import {
  currencyDecimals,
  formatAmount,
  formatMoney,
  formatSignedAmount,
  MoneyFormatError,
  parseSignedAmount,
  signedAmountToJson,
} from "./money.js";

describe("the one money formatter and parser (issue 35)", () => {
  it("one rule per currency exponent: signs, BigInt sums, 0 and 2 decimals", () => {
    expect(formatSignedAmount(1250)).toBe("12.50");
    expect(formatSignedAmount(-5)).toBe("-0.05");
    expect(formatSignedAmount(0)).toBe("0.00");
    expect(formatSignedAmount(12_345_678_901_234_567_890n)).toBe("123456789012345678.90");
    expect(formatSignedAmount(-1250n, 0)).toBe("-1250");
    expect(currencyDecimals("DKK")).toBe(2);
    expect(currencyDecimals("JPY")).toBe(0);
    expect(currencyDecimals("not a currency")).toBe(2);
    expect(formatMoney(-1999, "EUR")).toBe("-19.99");
    expect(formatMoney(500, "JPY")).toBe("500");
    // formatAmount is the non-negative case of the same rule.
    for (const m of [0, 7, 99, 100, 1250, 123_456_789]) expect(formatAmount(m)).toBe(formatSignedAmount(m));
    expect(() => formatAmount(-1)).toThrow(MoneyFormatError);
  });

  it("parses signed decimals exactly and writes the same JSON numbers as minor / 100", () => {
    expect(parseSignedAmount("-12.50")).toBe(-1250);
    expect(parseSignedAmount("0.1")).toBe(10);
    expect(() => parseSignedAmount("1.005")).toThrow(MoneyFormatError);
    for (const m of [-123_456_789, -250, -1, 0, 1, 10, 1999, 12_345_678_901])
      expect(signedAmountToJson(m)).toBe(m / 100);
  });
});
