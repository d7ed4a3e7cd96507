import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

describe("fault schedules in the HTTP layer (admin faults)", () => {
  let kit: V10Kit;
  let posId: string;
  let beaconId: string;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0 });
    ({ posId, beaconId } = await kit.createPos());
  });
  afterAll(() => kit.close());

  const reservedPayment = () => kit.reserved(posId, beaconId, 8);
  const captures = (id: string) =>
    kit.emu.ledger().filter((e) => e.id === id && e.kind === "captured").length;

  it("reset after applying: the capture happened; the retry answers 200 and the ledger shows one capture", async () => {
    const id = await reservedPayment();
    kit.emu.faults.add({ method: "POST", path: "/v10/payments/*/capture", fault: "reset", applied: true });
    const err = await kit
      .call("POST", `/v10/payments/${id}/capture`, { body: { amount: 8 } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(captures(id)).toBe(1);
    expect((await kit.call("POST", `/v10/payments/${id}/capture`, { body: { amount: 8 } })).status).toBe(200);
    expect(captures(id)).toBe(1);
  });

  it("reset without applying leaves the payment Reserved", async () => {
    const id = await reservedPayment();
    kit.emu.faults.add({ path: "/v10/payments/*/capture", fault: "reset", applied: false });
    await expect(kit.call("POST", `/v10/payments/${id}/capture`, { body: { amount: 8 } })).rejects.toThrow();
    expect((await kit.payment(id)).status).toBe("Reserved");
    await kit.call("POST", `/v10/payments/${id}/cancel`);
  });

  it("lost response: headers and half a body, then the socket dies; the request was applied", async () => {
    const id = await reservedPayment();
    kit.emu.faults.add({ method: "GET", path: "/v10/payments/*", fault: "lost" });
    await expect(kit.call("GET", `/v10/payments/${id}`)).rejects.toThrow();
    kit.emu.faults.add({ method: "POST", path: "/v10/payments/*/cancel", fault: "lost" });
    await expect(kit.call("POST", `/v10/payments/${id}/cancel`)).rejects.toThrow();
    expect((await kit.payment(id)).status).toBe("CancelledByClient");
  });

  it("500 without applying; 409 with a chosen code; both leave state alone", async () => {
    const id = await reservedPayment();
    kit.emu.faults.add({ path: "/v10/payments/*/capture", fault: "500", applied: false });
    const r = await kit.call("POST", `/v10/payments/${id}/capture`, { body: { amount: 8 } });
    expect([r.status, r.code]).toEqual([500, "2001"]);
    kit.emu.faults.add({ path: "/v10/payments/*/capture", fault: "409", code: "1304" });
    const c = await kit.call("POST", `/v10/payments/${id}/capture`, { body: { amount: 8 } });
    expect([c.status, c.code]).toEqual([409, "1304"]);
    expect((await kit.payment(id)).status).toBe("Reserved");
    await kit.call("POST", `/v10/payments/${id}/cancel`);
  });

  it("hang: no answer until the client gives up; count limits the rule", async () => {
    const id = await reservedPayment();
    kit.emu.faults.add({ method: "GET", path: "/v10/payments/*", fault: "hang", count: 2 });
    await expect(kit.call("GET", `/v10/payments/${id}`, { timeoutMs: 100 })).rejects.toThrow();
    await expect(kit.call("GET", `/v10/payments/${id}`, { timeoutMs: 100 })).rejects.toThrow();
    expect((await kit.call("GET", `/v10/payments/${id}`, { timeoutMs: 1000 })).status).toBe(200);
    expect(kit.emu.stats().faults.hang).toBe(2);
    await kit.call("POST", `/v10/payments/${id}/cancel`);
  });

  it("delay answers later; DELETE /_admin/faults clears; the admin API is never faulted", async () => {
    kit.emu.faults.add({ method: "GET", path: "/v10/stores", fault: "delay", delayMs: 120 });
    const t0 = Date.now();
    expect((await kit.call("GET", "/v10/stores")).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    const admin = kit.emu.info.admin;
    const add = await request(`${admin}/faults`, {
      method: "POST",
      body: JSON.stringify({ path: "/**", fault: "500", count: 5 }),
    });
    expect(add.statusCode).toBe(200);
    expect(((await add.body.json()) as { faults: unknown[] }).faults).toHaveLength(1);
    expect((await kit.call("GET", "/v10/stores")).status).toBe(500);
    expect((await request(`${admin}/faults`)).statusCode).toBe(200);
    const cleared = await request(`${admin}/faults`, { method: "DELETE" });
    expect(await cleared.body.json()).toEqual({ faults: [] });
    expect((await kit.call("GET", "/v10/stores")).status).toBe(200);
    const bad = await request(`${admin}/faults`, {
      method: "POST",
      body: JSON.stringify({ path: "/x", fault: "boom" }),
    });
    expect(bad.statusCode).toBe(400);
    await bad.body.dump();
  });

  it("faults also reach the older interface's routes", async () => {
    kit.emu.faults.add({ method: "POST", path: "/API/*/*", fault: "409" });
    const r = await request(`${kit.emu.info.legacy.baseUrl}/API/V08/GetPosList`, {
      method: "POST",
      body: "{}",
    });
    expect(r.statusCode).toBe(409);
    await r.body.dump();
  });
});
