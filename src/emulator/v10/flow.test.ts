import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

describe("V10 happy paths (certification P1-P3)", () => {
  let kit: V10Kit;
  beforeAll(async () => {
    kit = await V10Kit.start();
  });
  afterAll(() => kit.close());

  it("onboards a PoS and finds it by merchantPosId", async () => {
    const r = await kit.call("POST", "/v10/pointofsales", {
      body: {
        merchantPosId: "vm-1",
        storeId: kit.emu.info.v10.storeId,
        name: "Vending 1",
        supportedBeaconTypes: ["QR"],
      },
    });
    expect(r.status).toBe(200);
    const posId = (r.body as { posId: string }).posId;
    const list = await kit.call("GET", "/v10/pointofsales?merchantPosId=vm-1");
    expect(list.body).toEqual({ posIds: [posId] });
    const pos = await kit.call("GET", `/v10/pointofsales/${posId}`);
    expect(pos.body).toMatchObject({
      posId,
      merchantPosId: "vm-1",
      name: "Vending 1",
      requirePaymentBeforeCheckin: false,
      callbackAlias: null,
    });
    expect((pos.body as { beaconId: string }).beaconId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("P1: initiate → check-in → accept → Reserved → capture → Captured, with ledger entries", async () => {
    const { posId, beaconId } = await kit.createPos();
    const r = await kit.initiate(posId, 20);
    expect(r.status).toBe(200);
    const paymentId = (r.body as { paymentId: string }).paymentId;
    let p = await kit.payment(paymentId);
    expect(p).toMatchObject({ status: "Initiated", amount: 20, currencyCode: "DKK", pollDelayInMs: 10 });
    expect(p).not.toHaveProperty("customerReceiptToken");
    expect(p).not.toHaveProperty("partialCapturePossible");
    expect(kit.emu.userSimulation.checkin(beaconId, "+4520031803").status).toBe(200);
    p = await kit.payment(paymentId);
    expect(p).toMatchObject({ status: "IssuedToUser", customerReceiptToken: "RT4520031803", loyaltyIds: [] });
    expect(kit.emu.userSimulation.accept(beaconId, "+4520031803").status).toBe(200);
    kit.emu.clock.advance(10);
    p = await kit.payment(paymentId);
    expect(p).toMatchObject({ status: "Reserved", partialCapturePossible: true });
    expect(String(p.paymentExpiresAt)).toMatch(/^\d{4}-\d\d-\d\dT.*\+00:00$/);
    expect(
      (await kit.call("POST", `/v10/payments/${paymentId}/capture`, { body: { amount: 10 } })).status,
    ).toBe(200);
    p = await kit.payment(paymentId);
    expect(p.status).toBe("Captured");
    expect(p).not.toHaveProperty("partialCapturePossible");
    const mine = kit.emu.ledger().filter((e) => e.id === paymentId);
    expect(mine.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 2000],
      ["captured", 1000],
    ]);
  });

  it("P2: the user rejects → CancelledByUser", async () => {
    const { posId, beaconId } = await kit.createPos();
    kit.emu.userSimulation.checkin(beaconId, "+4520031801");
    const paymentId = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    expect((await kit.payment(paymentId)).status).toBe("IssuedToUser");
    expect(kit.emu.userSimulation.reject(beaconId).status).toBe(200);
    expect((await kit.payment(paymentId)).status).toBe("CancelledByUser");
  });

  it("P3: the client cancels → CancelledByClient; a repeated cancel is 200", async () => {
    const { posId } = await kit.createPos();
    const paymentId = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    expect((await kit.call("POST", `/v10/payments/${paymentId}/cancel`)).status).toBe(200);
    expect((await kit.payment(paymentId)).status).toBe("CancelledByClient");
    expect((await kit.call("POST", `/v10/payments/${paymentId}/cancel`)).status).toBe(200);
  });

  it("cancel of a Reserved payment releases it (ledger cancelled)", async () => {
    const { posId, beaconId } = await kit.createPos();
    const paymentId = await kit.reserved(posId, beaconId, 7.25);
    expect((await kit.call("POST", `/v10/payments/${paymentId}/cancel`)).status).toBe(200);
    const kinds = kit.emu
      .ledger()
      .filter((e) => e.id === paymentId)
      .map((e) => [e.kind, e.amount]);
    expect(kinds).toEqual([
      ["reserved", 725],
      ["cancelled", 725],
    ]);
  });

  it("the token endpoint refuses bad credentials and grants", async () => {
    const url = kit.emu.info.v10.tokenUrl;
    const basic = (id: string, s: string) => `Basic ${Buffer.from(`${id}:${s}`).toString("base64")}`;
    const post = (auth: string, body: string) =>
      fetch(url, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
        body,
      });
    expect(
      (await post(basic(kit.emu.info.v10.clientId, "wrong"), "grant_type=client_credentials")).status,
    ).toBe(401);
    const bad = await post(
      basic(kit.emu.info.v10.clientId, kit.emu.info.v10.clientSecret),
      "grant_type=password",
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "unsupported_grant_type" });
    const ok = await post(
      basic(kit.emu.info.v10.clientId, kit.emu.info.v10.clientSecret),
      "grant_type=client_credentials&merchant_vat=DK12345678",
    );
    expect(await ok.json()).toMatchObject({
      token_type: "Bearer",
      expires_in: 3700,
      scope: "integrator_scope",
    });
  });
});
