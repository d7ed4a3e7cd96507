import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  authorizationHeader,
  isLatin1,
  merchantKeyBytes,
  paymentStartHmac,
  SigningError,
  verifyAuthorization,
} from "./signing.js";

describe("authorizationHeader (pos-legacy §3)", () => {
  it("reproduces the public worked vector", () => {
    const body =
      '{"POSId":"a123456-b123-c123-d123-e12345678901","LocationId":"88888","MerchantId":"POSDK99999"}';
    expect(
      authorizationHeader("1234567890", "https://localhost:9003/API/V07/PaymentCancel", body, 1413794400),
    ).toBe("isGAb6zjnrOmHEj/d7ZE6VTEggY5zQqX7bnJ1/Y0gjc= 1413794400");
  });

  it("reproduces the project loopback vector", () => {
    const body =
      '{"MerchantId":"POSDK99999","LocationId":"88888","PoSId":"vend-unit-7","OrderId":"V7-000042"}';
    expect(
      authorizationHeader(
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "http://127.0.0.1:8080/API/V08/GetPaymentStatus",
        body,
        1700000000,
      ),
    ).toBe("rHMWdjwpogb/l1ZOwoQ7YNsWVdsut4cmVrLhyBWk0CU= 1700000000");
  });

  it("refuses a fractional timestamp", () => {
    expect(() => authorizationHeader("k", "http://127.0.0.1/API/V08/X", "{}", 1.5)).toThrow(SigningError);
  });
});

describe("verifyAuthorization", () => {
  const apiKey = "0f8fad5b-d9cb-469f-a165-70867728950e";
  const url = "http://127.0.0.1:8080/API/V08/GetPaymentStatus";
  const body = '{"MerchantId":"POSDK99999","LocationId":"88888","PoSId":"vend-unit-7","OrderId":"V7-000042"}';
  const header = "rHMWdjwpogb/l1ZOwoQ7YNsWVdsut4cmVrLhyBWk0CU= 1700000000";
  const check = (over: Partial<Parameters<typeof verifyAuthorization>[0]>) =>
    verifyAuthorization({
      apiKey,
      requestUrl: url,
      body: Buffer.from(body),
      header,
      nowMs: 1_700_000_000_000,
      ...over,
    });

  it("accepts the vector at the same time and within ±300 s", () => {
    expect(check({})).toBe(true);
    expect(check({ nowMs: 1_700_000_300_000 })).toBe(true);
    expect(check({ nowMs: 1_699_999_700_000 })).toBe(true);
  });

  it("refuses a stale or future timestamp", () => {
    expect(check({ nowMs: 1_700_000_301_000 })).toBe(false);
    expect(check({ nowMs: 1_699_999_699_000 })).toBe(false);
  });

  it("refuses a changed body, URL, key, digest, a missing or a repeated header", () => {
    expect(check({ body: Buffer.from(`${body} `) })).toBe(false);
    expect(check({ requestUrl: url.replace("V08", "V07") })).toBe(false);
    expect(check({ apiKey: "other" })).toBe(false);
    expect(check({ header: header.replace("rHMW", "rHMX") })).toBe(false);
    expect(check({ header: undefined })).toBe(false);
    expect(check({ header: [header, header] })).toBe(false);
    expect(check({ header: "garbage" })).toBe(false);
  });
});

describe("paymentStartHmac, official example with the derived key (pos-legacy §4.2)", () => {
  const key = createHash("sha256")
    .update(Buffer.from("POSDK99999".slice(3, 9), "latin1"))
    .digest();
  const base = {
    merchantId: "POSDK99999",
    locationId: "88888",
    posId: "a123456-b123-c123-d123-e12345678901",
    orderId: "123A124321",
    amount: "43.33",
    bulkRef: "MP Bulk Reference",
  };

  it("derives the documented key", () => {
    expect(key.toString("hex")).toBe("e832f8a9083ce51a8656dfaa5f76649d30a04a6cf77c047827fa99a5e95d3c5a");
  });

  it("reproduces the expected HMAC and the regression vectors", () => {
    expect(paymentStartHmac(key, base)).toBe("igy/mfeHupubDAu/GZgDRuzmMTGQ6ECHWZ4kFjMUMss=");
    expect(paymentStartHmac(key, { ...base, amount: "1023.43" })).toBe(
      "xThK0ZjK+hS3SO8or/dpJvcY7kp8izOpZOefwLkGZH4=",
    );
    expect(paymentStartHmac(key, { ...base, bulkRef: "" })).toBe(
      "4MlgAhhtSg5NmxR5FXv90DpTe4Qww2XijzZYOtPgMOs=",
    );
  });

  it("documents that the operation page's illustrative example does not reproduce", () => {
    expect(paymentStartHmac(key, { ...base, amount: "1023.43" })).not.toBe(
      "NTsitSPXe9f5o8Nclza8ZQIx9mdom6GdcyoCQvGs9o0=",
    );
  });
});

describe("paymentStartHmac, seed form with a text MerchantKey (pos-legacy §4.3)", () => {
  const key = merchantKeyBytes("TestMerchantKey-0001");
  const ids = { merchantId: "POSDK99999", locationId: "88888" };

  it.each([
    [
      "a123456-b123-c123-d123-e12345678901",
      "123A124321",
      "43.33",
      "MP Bulk Reference",
      "Semp6PgXAZvvknbLMk7PtcMmkq7SQxek2vUC1SXLkp8=",
    ],
    ["vend-unit-7", "V7-000042", "12.50", "", "UWr7pa6VNghDRfL9VXHBfw5RW/83xw5ohOqmD87XNYs="],
    [" vend-unit-7 ", "V7-000042", "12.50", "Kø 1", "V2Y88qaZ7LBz20xoLrOCIfkLgcaCSwyvPtCsZfq/o2k="],
  ])("PoSId %j OrderId %s Amount %s BulkRef %j", (posId, orderId, amount, bulkRef, expected) => {
    expect(paymentStartHmac(key, { ...ids, posId, orderId, amount, bulkRef })).toBe(expected);
  });

  it("gives the documented wrong value when the message is encoded as UTF-8 (negative row)", async () => {
    const { createHmac } = await import("node:crypto");
    const utf8 = createHmac("sha256", key)
      .update(Buffer.from("POSDK9999988888#vend-unit-7#V7-000042#12.50#Kø 1#", "utf8"))
      .digest("base64");
    expect(utf8).toBe("BQw2yuaD5cbKOP684p392bcn14/oOnMZL7mIJPefE7o=");
    expect(
      paymentStartHmac(key, {
        ...ids,
        posId: "vend-unit-7",
        orderId: "V7-000042",
        amount: "12.50",
        bulkRef: "Kø 1",
      }),
    ).not.toBe(utf8);
  });

  it("refuses characters outside ISO-8859-1 with a typed error", () => {
    const f = { ...ids, posId: "vend-unit-7", orderId: "V7-€", amount: "12.50", bulkRef: "" };
    expect(() => paymentStartHmac(key, f)).toThrow(expect.objectContaining({ code: "notLatin1" }));
    expect(() => merchantKeyBytes("key-✓")).toThrow(SigningError);
    expect(isLatin1("Kø 1")).toBe(true);
    expect(isLatin1("€")).toBe(false);
  });
});
