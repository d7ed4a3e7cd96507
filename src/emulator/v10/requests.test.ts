import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

describe("V10 request bodies: size, type, JSON, unknown fields, exact amounts (pos-v10 §1, §14, §19)", () => {
  let kit: V10Kit;
  let posId: string;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0, bodyLimitBytes: 1024 });
    posId = (await kit.createPos()).posId;
  });
  afterAll(() => kit.close());

  const initiate = (body: unknown, o: { raw?: string; contentType?: string | null } = {}) =>
    kit.call("POST", "/v10/payments", { body, ...o });
  const good = () => ({ posId, orderId: "o-1", amount: 1, currencyCode: "DKK", plannedCaptureDelay: "None" });

  it("413 code 1099 above the body limit", async () => {
    const r = await initiate({ ...good(), merchantPaymentLabel: "x".repeat(2000) });
    expect([r.status, r.code]).toEqual([413, "1099"]);
  });

  it("415 code 1099 for a non-JSON content type; JSON variants are accepted", async () => {
    const r = await initiate(good(), { contentType: "text/plain" });
    expect([r.status, r.code]).toEqual([415, "1099"]);
    const ok = await initiate(good(), { contentType: "application/*+json".replace("*", "vnd.test") });
    expect(ok.status).toBe(200);
    await kit.call("POST", `/v10/payments/${(ok.body as { paymentId: string }).paymentId}/cancel`);
  });

  it("400 1099 for malformed JSON, a non-object, an unknown field, a wrong enum", async () => {
    expect((await initiate(undefined, { raw: "{not json" })).code).toBe("1099");
    expect((await initiate(undefined, { raw: "[1,2]" })).code).toBe("1099");
    expect((await initiate({ ...good(), tip: 1 })).code).toBe("1099");
    expect((await initiate({ ...good(), currencyCode: "SEK" })).code).toBe("1099");
    expect((await initiate({ ...good(), plannedCaptureDelay: "Never" })).code).toBe("1099");
    expect((await initiate({ ...good(), restrictions: { userMinimumAge: 18 } })).code).toBe("1099");
  });

  it("amounts are read exactly: 3 decimals, exponent, negative, zero, string → 1102", async () => {
    for (const raw of ["12.345", "1e21", "-1", "0", '"12.50"', "null"]) {
      const text = JSON.stringify(good()).replace('"amount":1', `"amount":${raw}`);
      const r = await initiate(undefined, { raw: text });
      expect([raw, r.code]).toEqual([raw, "1102"]);
    }
  });

  it("12.50 written as 12.50 in JSON is 1250 minor units; reads back as 12.5", async () => {
    const text = JSON.stringify(good()).replace('"amount":1', '"amount":12.50');
    const r = await initiate(undefined, { raw: text });
    const id = (r.body as { paymentId: string }).paymentId;
    expect((await kit.payment(id)).amount).toBe(12.5);
    await kit.call("POST", `/v10/payments/${id}/cancel`);
  });

  it("1113 orderId and 1117 merchantPaymentLabel", async () => {
    expect((await initiate({ ...good(), orderId: "x".repeat(37) })).code).toBe("1113");
    expect((await initiate({ ...good(), orderId: 5 })).code).toBe("1113");
    expect((await initiate({ ...good(), merchantPaymentLabel: "€uro" })).code).toBe("1117");
    expect((await kit.call("POST", "/v10/payments/prepare", { body: { posId, orderId: "" } })).code).toBe(
      "1113",
    );
  });

  it("valid characters include Nordic letters and punctuation", async () => {
    const r = await initiate({ ...good(), orderId: "Æblegrød #1 (½)", merchantPaymentLabel: "Kø & bås" });
    expect(r.status).toBe(200);
    await kit.call("POST", `/v10/payments/${(r.body as { paymentId: string }).paymentId}/cancel`);
  });

  it("unknown /v10 paths are 404, wrong methods 405", async () => {
    expect((await kit.call("GET", "/v10/nothing")).status).toBe(404);
    expect((await kit.call("PUT", "/v10/payments")).status).toBe(405);
  });
});

describe("V10 GET filters and stores (pos-v10 §13, §19)", () => {
  let kit: V10Kit;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0 });
  });
  afterAll(() => kit.close());

  it("payments: 1109 without posId/orderId; reused orderId → latest; state=Captured lists captured ones", async () => {
    expect((await kit.call("GET", "/v10/payments")).code).toBe("1109");
    expect((await kit.call("GET", "/v10/payments?state=Captured")).code).toBe("1109");
    const { posId, beaconId } = await kit.createPos();
    const a = await kit.reserved(posId, beaconId, 2);
    await kit.call("POST", `/v10/payments/${a}/capture`, { body: { amount: 2 } });
    const b = ((await kit.initiate(posId, 3, { orderId: "same" })).body as { paymentId: string }).paymentId;
    await kit.call("POST", `/v10/payments/${b}/cancel`);
    const c = ((await kit.initiate(posId, 3, { orderId: "same" })).body as { paymentId: string }).paymentId;
    expect((await kit.call("GET", "/v10/payments?orderId=same")).body).toEqual({ paymentIds: [c] });
    expect((await kit.call("GET", `/v10/payments?posId=${posId}`)).body).toEqual({ paymentIds: [c] });
    expect((await kit.call("GET", `/v10/payments?posId=${posId}&state=Captured`)).body).toEqual({
      paymentIds: [a],
    });
    expect((await kit.call("GET", `/v10/payments?posId=${posId}&state=Reserved`)).code).toBe("1099");
  });

  it("stores: all of the merchant, by brand+location, 1119/1120/1122, GET by id, 404", async () => {
    const { storeId, merchantBrandId, merchantLocationId } = kit.emu.info.v10;
    expect((await kit.call("GET", "/v10/stores")).body).toEqual({ storeIds: [storeId] });
    const both = await kit.call(
      "GET",
      `/v10/stores?merchantBrandId=${merchantBrandId}&merchantLocationId=${merchantLocationId}`,
    );
    expect(both.body).toEqual({ storeIds: [storeId] });
    expect((await kit.call("GET", `/v10/stores?merchantBrandId=${merchantBrandId}`)).code).toBe("1122");
    expect((await kit.call("GET", "/v10/stores?merchantBrandId=BAD&merchantLocationId=88888")).code).toBe(
      "1119",
    );
    expect(
      (await kit.call("GET", `/v10/stores?merchantBrandId=${merchantBrandId}&merchantLocationId=8`)).code,
    ).toBe("1120");
    expect((await kit.call("GET", `/v10/stores/${storeId}`)).body).toMatchObject({
      storeId,
      merchantBrandId,
      merchantLocationId,
      storeName: "Emulator Store",
    });
    expect((await kit.call("GET", "/v10/stores/00000000-0000-4000-8000-000000000000")).status).toBe(404);
  });

  it("temporary VAT lookup (invented response): known store → VAT, unknown → 404, no token → 401", async () => {
    const q =
      "/pos-core-for-integrators/public/v1/stores/vat?merchantBrandId=POSDK99999&merchantLocationId=88888";
    expect((await kit.call("GET", q)).body).toEqual({ merchantVatNumber: "DK12345678" });
    expect((await kit.call("GET", q.replace("88888", "11111"))).status).toBe(404);
    expect((await kit.call("GET", q, { token: null })).status).toBe(401);
  });
});
