import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

const FI_STORE = "11111111-1111-4111-8111-111111111111";
const INACTIVE_STORE = "22222222-2222-4222-8222-222222222222";

describe("V10 ownership by integrator and merchant (seed Authentication; pos-v10 §11)", () => {
  let kit: V10Kit;
  let other: string;
  let fi: string[];
  let posId: string;
  let paymentId: string;
  let capturedId: string;
  let refundId: string;
  beforeAll(async () => {
    kit = await V10Kit.start({
      timeSource: () => 0,
      seed: {
        integrators: [{ clientId: "other-integrator", clientSecret: "other-secret" }],
        merchants: [
          {
            vat: "FI87654321",
            stores: [{ storeId: FI_STORE, merchantBrandId: "POSFI11111", merchantLocationId: "00001" }],
          },
          {
            vat: "DK12345678",
            stores: [
              {
                storeId: INACTIVE_STORE,
                merchantBrandId: "POSDK99999",
                merchantLocationId: "77777",
                activated: false,
              },
            ],
          },
        ],
      },
    });
    other = await kit.fetchToken("other-integrator", "other-secret");
    fi = kit.headers("FI87654321");
    const pos = await kit.createPos();
    posId = pos.posId;
    const reserved = await kit.reserved(posId, pos.beaconId, 30);
    await kit.call("POST", `/v10/payments/${reserved}/capture`, { body: { amount: 30 } });
    capturedId = reserved;
    const refund = await kit.call("POST", "/v10/refunds", {
      body: { paymentId: capturedId, refundOrderId: "r-1", amount: 1, currencyCode: "DKK" },
    });
    refundId = (refund.body as { refundId: string }).refundId;
    paymentId = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
  });
  afterAll(() => kit.close());

  const ready = { amount: 1, currencyCode: "DKK", plannedCaptureDelay: "None" };

  it("PoS: other integrator 1400 everywhere; other merchant 1410 GET, 1409 DELETE, 1400 check-in and initiate", async () => {
    const asOther = { token: other };
    expect((await kit.call("GET", `/v10/pointofsales/${posId}`, asOther)).code).toBe("1400");
    expect((await kit.call("DELETE", `/v10/pointofsales/${posId}`, asOther)).code).toBe("1400");
    expect((await kit.call("GET", `/v10/pointofsales/${posId}/checkin`, asOther)).code).toBe("1400");
    const initOther = await kit.call("POST", "/v10/payments", {
      token: other,
      body: { posId, orderId: "o", amount: 1, currencyCode: "DKK", plannedCaptureDelay: "None" },
    });
    expect([initOther.status, initOther.code]).toEqual([403, "1400"]);
    expect(
      (await kit.call("POST", "/v10/payments/prepare", { token: other, body: { posId, orderId: "o" } })).code,
    ).toBe("1400");
    expect((await kit.call("GET", `/v10/pointofsales/${posId}`, { headers: fi })).code).toBe("1410");
    expect((await kit.call("DELETE", `/v10/pointofsales/${posId}`, { headers: fi })).code).toBe("1409");
    expect((await kit.call("GET", `/v10/pointofsales/${posId}/checkin`, { headers: fi })).code).toBe("1400");
  });

  it("payment: other integrator 1401; other merchant 1411 GET, 1406 ready, 1407 capture, 1408 cancel", async () => {
    for (const [m, path, body] of [
      ["GET", `/v10/payments/${paymentId}`, undefined],
      ["POST", `/v10/payments/${paymentId}/ready`, ready],
      ["POST", `/v10/payments/${paymentId}/capture`, { amount: 1 }],
      ["POST", `/v10/payments/${paymentId}/cancel`, undefined],
    ] as const) {
      const r = await kit.call(m, path, { token: other, body });
      expect([r.status, r.code]).toEqual([403, "1401"]);
    }
    const codes = [];
    for (const [m, path, body] of [
      ["GET", `/v10/payments/${paymentId}`, undefined],
      ["POST", `/v10/payments/${paymentId}/ready`, ready],
      ["POST", `/v10/payments/${paymentId}/capture`, { amount: 1 }],
      ["POST", `/v10/payments/${paymentId}/cancel`, undefined],
    ] as const) {
      codes.push((await kit.call(m, path, { headers: fi, body })).code);
    }
    expect(codes).toEqual(["1411", "1406", "1407", "1408"]);
  });

  it("refunds: 1401 creating on another's payment, 1402 reading or changing another's refund", async () => {
    const create = await kit.call("POST", "/v10/refunds", {
      token: other,
      body: { paymentId: capturedId, refundOrderId: "r-2", amount: 1, currencyCode: "DKK" },
    });
    expect([create.status, create.code]).toEqual([403, "1401"]);
    for (const [m, path] of [
      ["GET", `/v10/refunds/${refundId}`],
      ["POST", `/v10/refunds/${refundId}/capture`],
      ["POST", `/v10/refunds/${refundId}/cancel`],
    ] as const) {
      expect((await kit.call(m, path, { token: other })).code).toBe("1402");
    }
  });

  it("lists show only the caller's own resources", async () => {
    expect((await kit.call("GET", `/v10/payments?posId=${posId}`, { token: other })).body).toEqual({
      paymentIds: [],
    });
    expect((await kit.call("GET", `/v10/refunds?paymentId=${capturedId}`, { token: other })).body).toEqual({
      refundIds: [],
    });
    expect(
      (await kit.call("GET", `/v10/pointofsales?storeId=${kit.emu.info.v10.storeId}`, { token: other })).body,
    ).toEqual({ posIds: [] });
    expect((await kit.call("GET", "/v10/stores", { headers: fi })).body).toEqual({ storeIds: [FI_STORE] });
  });

  it("1403 creating a PoS on another merchant's store; 1204 paying on a store not activated", async () => {
    const r = await kit.call("POST", "/v10/pointofsales", {
      body: { merchantPosId: "x", storeId: FI_STORE, name: "n", supportedBeaconTypes: ["QR"] },
    });
    expect([r.status, r.code]).toEqual([403, "1403"]);
    const inactive = await kit.call("POST", "/v10/pointofsales", {
      body: { merchantPosId: "inactive", storeId: INACTIVE_STORE, name: "n", supportedBeaconTypes: ["QR"] },
    });
    const pos = (inactive.body as { posId: string }).posId;
    expect((await kit.initiate(pos)).code).toBe("1204");
    expect(
      (await kit.call("POST", "/v10/payments/prepare", { body: { posId: pos, orderId: "o" } })).code,
    ).toBe("1204");
  });

  it("404 comes before 403, 403 before body validation (pos-v10 §11 order)", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await kit.call("GET", `/v10/payments/${unknown}`, { token: other })).status).toBe(404);
    const r = await kit.call("POST", `/v10/payments/${paymentId}/capture`, {
      token: other,
      body: { amount: -1 },
    });
    expect(r.code).toBe("1401");
  });
});
