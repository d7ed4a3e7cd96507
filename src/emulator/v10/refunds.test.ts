import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, V10Kit } from "./testkit.test-support.js";

const refundOf = (r: Answer): string => (r.body as { refundId: string }).refundId;

describe("V10 refunds (pos-v10 §8; certification R1, R2)", () => {
  let kit: V10Kit;
  let posId: string;
  let beaconId: string;
  beforeAll(async () => {
    kit = await V10Kit.start({
      timeSource: () => 0,
      seed: {
        merchants: [
          {
            vat: "FI11223344",
            stores: [
              {
                storeId: "33333333-3333-4333-8333-333333333333",
                merchantBrandId: "POSFI22222",
                merchantLocationId: "00002",
                balance: 500,
              },
            ],
          },
        ],
      },
    });
    ({ posId, beaconId } = await kit.createPos());
  });
  afterAll(() => kit.close());

  async function captured(amount: number): Promise<string> {
    const p = await kit.reserved(posId, beaconId, amount);
    await kit.call("POST", `/v10/payments/${p}/capture`, { body: { amount } });
    return p;
  }
  const refund = (paymentId: string, amount: number, extra: Record<string, unknown> = {}) =>
    kit.call("POST", "/v10/refunds", {
      body: { paymentId, refundOrderId: randomUUID(), amount, currencyCode: "DKK", ...extra },
    });

  it("R1: Initiated → Reserved → capture → Captured (ledger refunded); capture again 200", async () => {
    const p = await captured(50);
    const r = refundOf(await refund(p, 20));
    expect((await kit.call("GET", `/v10/refunds/${r}`)).body).toMatchObject({
      status: "Initiated",
      amount: 20,
      paymentId: p,
      pollDelayInMs: 100,
    });
    kit.emu.clock.advance(100);
    expect((await kit.call("GET", `/v10/refunds/${r}`)).body).toMatchObject({ status: "Reserved" });
    expect((await kit.call("POST", `/v10/refunds/${r}/capture`)).status).toBe(200);
    expect((await kit.call("POST", `/v10/refunds/${r}/capture`)).status).toBe(200);
    expect((await kit.call("GET", `/v10/refunds/${r}`)).body).toMatchObject({ status: "Captured" });
    expect(kit.emu.ledger().filter((e) => e.kind === "refunded" && e.id === r)).toMatchObject([
      { paymentId: p, amount: 2000 },
    ]);
    expect((await kit.call("POST", `/v10/refunds/${r}/cancel`)).code).toBe("1352");
    expect((await kit.call("GET", `/v10/refunds?paymentId=${p}`)).body).toEqual({ refundIds: [r] });
  });

  it("R2: cancel → CancelledByClient, amount available again; 1351 capture after cancel", async () => {
    const p = await captured(10);
    const r = refundOf(await refund(p, 10));
    expect((await kit.call("POST", `/v10/refunds/${r}/cancel`)).status).toBe(200);
    expect((await kit.call("POST", `/v10/refunds/${r}/cancel`)).status).toBe(200);
    expect((await kit.call("GET", `/v10/refunds/${r}`)).body).toMatchObject({ status: "CancelledByClient" });
    expect((await kit.call("POST", `/v10/refunds/${r}/capture`)).code).toBe("1351");
    expect((await refund(p, 10)).status).toBe(200);
  });

  it("1351 capture while Initiated; a Reserved refund is auto-captured after 24 h → ExpiredAndCaptured", async () => {
    const p = await captured(10);
    const r = refundOf(await refund(p, 5));
    expect((await kit.call("POST", `/v10/refunds/${r}/capture`)).code).toBe("1351");
    kit.emu.clock.advance(100 + 24 * 3600_000);
    await kit.refreshToken();
    expect((await kit.call("GET", `/v10/refunds/${r}`)).body).toMatchObject({ status: "ExpiredAndCaptured" });
    expect(
      kit.emu
        .ledger()
        .filter((e) => e.id === r)
        .map((e) => e.kind),
    ).toEqual(["refunded"]);
  });

  it("1354 not captured, 1001 unknown payment, 1365 currency, 1367 above captured, 1114, 1102", async () => {
    const reserved = await kit.reserved(posId, beaconId, 10);
    expect((await refund(reserved, 1)).code).toBe("1354");
    await kit.call("POST", `/v10/payments/${reserved}/cancel`);
    expect((await refund(randomUUID(), 1)).code).toBe("1001");
    const p = await captured(10);
    expect((await refund(p, 1, { currencyCode: "EUR" })).code).toBe("1365");
    expect((await refund(p, 6)).status).toBe(200);
    expect((await refund(p, 4.01)).code).toBe("1367");
    expect((await refund(p, 4)).status).toBe(200);
    expect((await refund(p, 1, { refundOrderId: "" })).code).toBe("1114");
    expect((await refund(p, 0)).code).toBe("1102");
  });

  it("1366 when the capture is more than 90 days old", async () => {
    const p = await captured(10);
    kit.emu.clock.advance(90 * 24 * 3600_000 + 1);
    await kit.refreshToken();
    expect((await refund(p, 1)).code).toBe("1366");
  });

  it("1368 when the store balance cannot cover the refund; a cancelled refund restores it", async () => {
    const fi = kit.headers("FI11223344");
    const pos = await kit.call("POST", "/v10/pointofsales", {
      headers: fi,
      body: {
        merchantPosId: "fi",
        storeId: "33333333-3333-4333-8333-333333333333",
        name: "FI",
        supportedBeaconTypes: ["QR"],
      },
    });
    const fiPos = (pos.body as { posId: string }).posId;
    const beacon = (
      (await kit.call("GET", `/v10/pointofsales/${fiPos}`, { headers: fi })).body as { beaconId: string }
    ).beaconId;
    kit.emu.userSimulation.checkin(beacon, "+358200318001");
    const init = await kit.call("POST", "/v10/payments", {
      headers: fi,
      body: { posId: fiPos, orderId: "o", amount: 10, currencyCode: "EUR", plannedCaptureDelay: "None" },
    });
    const p = (init.body as { paymentId: string }).paymentId;
    kit.emu.userSimulation.accept(beacon, "+358200318001");
    kit.emu.clock.advance(10);
    expect(
      (await kit.call("POST", `/v10/payments/${p}/capture`, { headers: fi, body: { amount: 10 } })).status,
    ).toBe(200);
    const body = (refundOrderId: string, amount: number) => ({
      paymentId: p,
      refundOrderId,
      amount,
      currencyCode: "EUR",
    });
    // seeded balance 5.00
    expect((await kit.call("POST", "/v10/refunds", { headers: fi, body: body("r1", 5.01) })).code).toBe(
      "1368",
    );
    const r1 = await kit.call("POST", "/v10/refunds", { headers: fi, body: body("r1", 3) });
    expect((await kit.call("POST", "/v10/refunds", { headers: fi, body: body("r2", 2.01) })).code).toBe(
      "1368",
    );
    await kit.call("POST", `/v10/refunds/${refundOf(r1)}/cancel`, { headers: fi });
    expect((await kit.call("POST", "/v10/refunds", { headers: fi, body: body("r2", 5) })).status).toBe(200);
  });

  it("404 1004 capturing an unknown refund, 404 without body elsewhere; 1110 list without paymentId", async () => {
    const unknown = randomUUID();
    const cap = await kit.call("POST", `/v10/refunds/${unknown}/capture`);
    expect([cap.status, cap.code]).toEqual([404, "1004"]);
    expect((await kit.call("GET", `/v10/refunds/${unknown}`)).body).toBeUndefined();
    expect((await kit.call("POST", `/v10/refunds/${unknown}/cancel`)).status).toBe(404);
    expect((await kit.call("GET", "/v10/refunds")).code).toBe("1110");
  });
});
