import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationHeader } from "../../payment/legacy/signing.js";
import { V10Kit } from "./testkit.test-support.js";

describe("user simulation over HTTP for both interfaces (pos-v10 §17)", () => {
  let kit: V10Kit;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0 });
  });
  afterAll(() => kit.close());

  const sim = (action: string, body: unknown, token: string | null = kit.token) =>
    request(`${kit.emu.info.v10.baseUrl}/app/usersimulation/${action}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.statusCode, text: await r.body.text() }));

  it("needs a bearer token (401 without body), not the x-service headers", async () => {
    const r = await sim("checkin", { beaconId: "x", phoneNumber: "+4520031801" }, null);
    expect(r).toEqual({ status: 401, text: "" });
  });

  it("check-in → accept → Reserved; cancelpaymentbyuser → CancelledByUser", async () => {
    const { posId, beaconId } = await kit.createPos();
    expect((await sim("checkin", { beaconId, phoneNumber: "+4520031801" })).status).toBe(200);
    const a = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    expect(await sim("acceptpayment", { beaconId, phoneNumber: "+4520031801" })).toEqual({
      status: 200,
      text: "",
    });
    kit.emu.clock.advance(10);
    expect((await kit.payment(a)).status).toBe("Reserved");
    const b = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
    await sim("checkin", { beaconId, phoneNumber: "+4520031802" });
    expect((await sim("cancelpaymentbyuser", { beaconId })).status).toBe(200);
    expect((await kit.payment(b)).status).toBe("CancelledByUser");
  });

  it("unknown beacon or phone → 404; unknown field → 400 1099; accept by another user → 409", async () => {
    const { posId, beaconId } = await kit.createPos();
    expect((await sim("checkin", { beaconId: "123456789012345", phoneNumber: "+4520031801" })).status).toBe(
      404,
    );
    expect((await sim("checkin", { beaconId, phoneNumber: "+4599999999" })).status).toBe(404);
    const bad = await sim("checkin", { beaconId, phoneNumber: "+4520031801", extra: 1 });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ code: "1099" });
    await sim("checkin", { beaconId, phoneNumber: "+4520031801" });
    await kit.initiate(posId);
    expect((await sim("acceptpayment", { beaconId, phoneNumber: "+4520031802" })).status).toBe(409);
  });

  it("a beaconId that is an older-interface PoSUnitId goes to the older interface's model", async () => {
    const { baseUrl, merchantId, locationId, apiKey } = kit.emu.info.legacy;
    const call = async (op: string, body: Record<string, unknown>) => {
      const url = `${baseUrl}/API/V08/${op}`;
      const text = JSON.stringify(body);
      const r = await request(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: authorizationHeader(apiKey, url, text, Math.floor(kit.emu.clock.now() / 1000)),
        },
        body: text,
      });
      return { status: r.statusCode, body: await r.body.text() };
    };
    const reg = await call("RegisterPoS", {
      MerchantId: merchantId,
      LocationId: locationId,
      Name: "Legacy VM",
      PoSId: "legacy-pos-1",
    });
    expect(reg).toEqual({ status: 200, body: expect.any(String) });
    const unit = "100000000000001";
    const assign = await call("AssignPoSUnitIdToPos", {
      MerchantId: merchantId,
      LocationId: locationId,
      PoSId: "legacy-pos-1",
      PoSUnitId: unit,
    });
    expect(assign.status).toBe(200);
    expect((await sim("checkin", { beaconId: unit, phoneNumber: "+4520031801" })).status).toBe(200);
    expect(kit.emu.userSimulation.checkin(unit, "+4520031801").status).toBe(200);
  });
});
