import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

describe("V10 idempotency keys (pos-v10 §9)", () => {
  let kit: V10Kit;
  let posId: string;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0 });
    posId = (await kit.createPos()).posId;
  });
  afterAll(() => kit.close());

  const body = (orderId = "o-1") => ({
    posId,
    orderId,
    amount: 5,
    currencyCode: "DKK",
    plannedCaptureDelay: "None",
  });
  const cancelAll = async () => {
    const list = (await kit.call("GET", `/v10/payments?posId=${posId}`)).body as { paymentIds: string[] };
    for (const id of list.paymentIds) await kit.call("POST", `/v10/payments/${id}/cancel`);
  };

  it("missing 1164, duplicated 1163, invalid 1162", async () => {
    expect((await kit.call("POST", "/v10/payments", { body: body(), key: null })).code).toBe("1164");
    const dup = await kit.call("POST", "/v10/payments", {
      body: body(),
      key: null,
      extra: ["x-service-idempotency-key", "a", "x-service-idempotency-key", "b"],
    });
    expect(dup.code).toBe("1163");
    expect((await kit.call("POST", "/v10/payments", { body: body(), key: "k".repeat(37) })).code).toBe(
      "1162",
    );
    for (const path of ["/v10/payments/prepare", "/v10/refunds", "/v10/pointofsales"]) {
      expect((await kit.call("POST", path, { body: {}, key: null })).code).toBe("1164");
    }
  });

  it("same key + same body → same paymentId, nothing new; same key + other body → 409 1306", async () => {
    const key = randomUUID();
    const a = await kit.call("POST", "/v10/payments", { body: body(), key });
    const b = await kit.call("POST", "/v10/payments", { body: { ...body(), currencyCode: "DKK" }, key });
    expect(b.body).toEqual(a.body);
    const c = await kit.call("POST", "/v10/payments", { body: body("o-2"), key });
    expect([c.status, c.code]).toEqual([409, "1306"]);
    expect(
      ((await kit.call("GET", `/v10/payments?posId=${posId}`)).body as { paymentIds: string[] }).paymentIds,
    ).toHaveLength(1);
    await cancelAll();
  });

  it("a refused request is not remembered: the retry is evaluated afresh", async () => {
    const key = randomUUID();
    const blocker = await kit.initiate(posId);
    expect((await kit.call("POST", "/v10/payments", { body: body(), key })).code).toBe("1301");
    await kit.call("POST", `/v10/payments/${(blocker.body as { paymentId: string }).paymentId}/cancel`);
    expect((await kit.call("POST", "/v10/payments", { body: body(), key })).status).toBe(200);
    await cancelAll();
  });

  it("O1: PoS creation applied then 500, applied then reset → the retry returns the same posId, one PoS", async () => {
    const key = randomUUID();
    const create = {
      merchantPosId: "o1",
      storeId: kit.emu.info.v10.storeId,
      name: "O1",
      supportedBeaconTypes: ["QR"],
    };
    kit.emu.faults.add({ method: "POST", path: "/v10/pointofsales", fault: "reset", applied: true });
    await expect(kit.call("POST", "/v10/pointofsales", { body: create, key })).rejects.toThrow();
    kit.emu.faults.add({ method: "POST", path: "/v10/pointofsales", fault: "500", applied: true });
    const failed = await kit.call("POST", "/v10/pointofsales", { body: create, key });
    expect([failed.status, failed.code]).toEqual([500, "2001"]);
    const retry = await kit.call("POST", "/v10/pointofsales", { body: create, key });
    expect(retry.status).toBe(200);
    const list = await kit.call("GET", "/v10/pointofsales?merchantPosId=o1");
    expect(list.body).toEqual({ posIds: [(retry.body as { posId: string }).posId] });
  });

  it("a retry arriving while the first call runs waits for it and gets the same id", async () => {
    const key = randomUUID();
    kit.emu.faults.add({ method: "POST", path: "/v10/payments", fault: "delay", delayMs: 150 });
    const first = kit.call("POST", "/v10/payments", { body: body("slow"), key });
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    const second = await kit.call("POST", "/v10/payments", { body: body("slow"), key });
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
    expect(second.status).toBe(200);
    expect((await first).body).toEqual(second.body);
    await cancelAll();
  });

  it("keys are kept 24 h of emulator time and purged after the retention (25 h)", async () => {
    const key = randomUUID();
    const a = await kit.call("POST", "/v10/payments", { body: body("ret"), key });
    await cancelAll();
    kit.emu.clock.advance(24 * 3600_000);
    await kit.refreshToken();
    expect((await kit.call("POST", "/v10/payments", { body: body("ret"), key })).body).toEqual(a.body);
    kit.emu.clock.advance(3600_000 + 1);
    await kit.refreshToken();
    const fresh = await kit.call("POST", "/v10/payments", { body: body("ret"), key });
    expect(fresh.status).toBe(200);
    expect(fresh.body).not.toEqual(a.body);
    expect(
      (await kit.call("GET", `/v10/payments/${(a.body as { paymentId: string }).paymentId}`)).status,
    ).toBe(404);
    await cancelAll();
  });
});
