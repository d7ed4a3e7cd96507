import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./v10/testkit.test-support.js";

describe("emulator info and admin API", () => {
  let kit: V10Kit;
  let admin: string;
  beforeAll(async () => {
    kit = await V10Kit.start({ timeSource: () => 0, startTime: 1_700_000_000_000 });
    admin = kit.emu.info.admin;
  });
  afterAll(() => kit.close());

  const get = async (path: string) => {
    const r = await request(`${admin}${path}`);
    return { status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> };
  };
  const post = async (path: string, body: unknown) => {
    const r = await request(`${admin}${path}`, { method: "POST", body: JSON.stringify(body) });
    return { status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> };
  };

  it("info carries the seeded merchant, both interfaces and the users", () => {
    const { info } = kit.emu;
    expect(info.admin).toBe(`http://127.0.0.1:${info.port}/_admin`);
    expect(info.v10).toMatchObject({
      baseUrl: `http://127.0.0.1:${info.port}`,
      tokenUrl: `http://127.0.0.1:${info.port}/integrator-authentication/connect/token`,
      merchantVat: "DK12345678",
      merchantBrandId: "POSDK99999",
      merchantLocationId: "88888",
    });
    expect(info.legacy).toMatchObject({ merchantId: "POSDK99999", locationId: "88888" });
    expect(Object.keys(info.legacy).sort()).toEqual([
      "apiKey",
      "baseUrl",
      "locationId",
      "merchantId",
      "merchantKey",
    ]);
    expect(info.users).toContainEqual({ phone: "+4520031805", features: ["creditCard", "noPartialCapture"] });
    expect(info.users).toContainEqual({
      phone: "+358200318005",
      features: ["creditCard", "noPartialCapture"],
    });
    expect(info.users.flatMap((u) => u.features)).toEqual(
      expect.arrayContaining(["insufficientFunds", "slowToAccept", "walksAway"]),
    );
  });

  it("clock: GET and advance", async () => {
    expect((await get("/clock")).body.now).toBe(1_700_000_000_000);
    expect((await post("/clock/advance", { ms: 5000 })).body.now).toBe(1_700_000_005_000);
    expect(kit.emu.clock.now()).toBe(1_700_000_005_000);
    expect((await post("/clock/advance", { ms: -1 })).status).toBe(400);
  });

  it("ledger lists every movement as {entries}", async () => {
    const { posId, beaconId } = await kit.createPos();
    const p = await kit.reserved(posId, beaconId, 1.5);
    const { body } = await get("/ledger");
    expect(body.entries).toContainEqual(
      expect.objectContaining({
        interface: "v10",
        id: p,
        kind: "reserved",
        amount: 150,
        paymentId: null,
        merchant: "DK12345678",
        point: kit.emu.info.v10.storeId,
      }),
    );
    // A time range (from inclusive, to exclusive) is found by binary search.
    const at = (body.entries as { at: number }[]).at(-1)?.at ?? 0;
    const iso = (ms: number) => new Date(ms).toISOString();
    expect((await get(`/ledger?from=${iso(at)}`)).body.entries).toHaveLength(1);
    expect((await get(`/ledger?from=${iso(at + 1)}`)).body.entries).toEqual([]);
    expect((await get(`/ledger?to=${iso(at)}`)).body.entries).toEqual(
      (body.entries as unknown[]).slice(0, -1),
    );
    expect((await get("/ledger?from=yesterday")).status).toBe(400);
  });

  it("users: added users can pay", async () => {
    expect((await post("/users", { phone: "+4520039999", features: ["debitCard"] })).status).toBe(200);
    expect((await post("/users", { phone: "nope", features: [] })).status).toBe(400);
    expect((await get("/users")).body.users).toContainEqual({
      phone: "+4520039999",
      features: ["debitCard"],
    });
    const { posId, beaconId } = await kit.createPos();
    await kit.reserved(posId, beaconId, 1, "+4520039999");
  });

  it("stats count requests by route", async () => {
    const { body } = await get("/stats");
    const byRoute = body.byRoute as Record<string, number>;
    expect(byRoute["GET /v10/payments/{id}"]).toBeGreaterThan(0);
    expect(byRoute["POST /v10/pointofsales"]).toBeGreaterThan(0);
    expect(body.requests).toBeGreaterThan(5);
  });

  it("unknown admin routes → 404", async () => {
    expect((await get("/nothing")).status).toBe(404);
  });
});

describe("retention keeps memory flat", () => {
  it("finished payments are purged after 25 h of emulator time, captured ones after the refund window", async () => {
    const kit = await V10Kit.start({ timeSource: () => 0 });
    try {
      const { posId, beaconId } = await kit.createPos();
      const cancelled = ((await kit.initiate(posId)).body as { paymentId: string }).paymentId;
      await kit.call("POST", `/v10/payments/${cancelled}/cancel`);
      const captured = await kit.reserved(posId, beaconId, 2);
      await kit.call("POST", `/v10/payments/${captured}/capture`, { body: { amount: 2 } });
      kit.emu.clock.advance(25 * 3600_000 + 1);
      await kit.refreshToken();
      expect((await kit.call("GET", `/v10/payments/${cancelled}`)).status).toBe(404);
      expect((await kit.call("GET", `/v10/payments/${captured}`)).status).toBe(200);
      kit.emu.clock.advance(91 * 24 * 3600_000);
      await kit.refreshToken();
      expect((await kit.call("GET", `/v10/payments/${captured}`)).status).toBe(404);
      expect(kit.emu.ledger().filter((e) => e.id === captured)).toHaveLength(2);
    } finally {
      await kit.close();
    }
  });
});
