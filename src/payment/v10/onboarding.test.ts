import { afterEach, describe, expect, it } from "vitest";
import {
  FAKE_TOKEN_PATH,
  type FakeReply,
  type FakeRequest,
  type FakeService,
  startFakeService,
  tokenReply,
} from "./fake-service.test-support.js";
import { createV10Driver } from "./index.js";
import { RecordingClock, testOptions } from "./v10.test-support.js";

/**
 * open(): store lookup, PoS lookup, creation with one key across retries (certification O1), delete +
 * re-create on a changed beacon or name (pos-v10 §12), against a small PoS model in a loopback fake.
 */
let fake: FakeService | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

interface Pos {
  posId: string;
  merchantPosId: string;
  storeId: string;
  name: string;
  beaconId: string;
  supportedBeaconTypes: string[];
  requirePaymentBeforeCheckin: boolean;
}

/** PoS model: create by key (applied once), optional faults on the next creates and deletes. */
function posService(faults: { create?: ("hang" | "500")[]; del?: ("hang" | "500")[] } = {}) {
  const poses = new Map<string, Pos>();
  const byKey = new Map<string, string>();
  let seq = 0;
  const handler = (req: FakeRequest): FakeReply => {
    if (req.path === FAKE_TOKEN_PATH) return tokenReply("t");
    if (req.method === "GET" && req.path === "/v10/stores") {
      const ok =
        req.query.get("merchantBrandId") === "POSDK99999" && req.query.get("merchantLocationId") === "88888";
      return { status: 200, body: { storeIds: ok ? ["store-9"] : [] } };
    }
    if (req.method === "GET" && req.path === "/v10/pointofsales") {
      const m = req.query.get("merchantPosId");
      return {
        status: 200,
        body: { posIds: [...poses.values()].filter((p) => p.merchantPosId === m).map((p) => p.posId) },
      };
    }
    if (req.method === "POST" && req.path === "/v10/pointofsales") {
      const key = String(req.headers["x-service-idempotency-key"]);
      let posId = byKey.get(key);
      if (posId === undefined) {
        const b = req.json as Omit<Pos, "posId" | "beaconId"> & { beaconId?: string };
        seq += 1;
        posId = `pos-${seq}`;
        poses.set(posId, { ...b, posId, beaconId: b.beaconId ?? `gen-beacon-${seq}` });
        byKey.set(key, posId);
      }
      const f = faults.create?.shift();
      if (f === "hang") return { fault: "hang" };
      if (f === "500") return { status: 500, body: { code: "2001" } };
      return { status: 200, body: { posId } };
    }
    const id = req.path.split("/")[3] ?? "";
    if (req.method === "GET" && poses.has(id)) return { status: 200, body: poses.get(id) };
    if (req.method === "DELETE") {
      if (!poses.delete(id)) return { status: 404 };
      const f = faults.del?.shift();
      if (f === "hang") return { fault: "hang" };
      if (f === "500") return { status: 500, body: { code: "2002" } };
      return { status: 200 };
    }
    return { status: 404 };
  };
  return { handler, poses };
}

const opts = (url: string, over: Parameters<typeof testOptions>[1]) =>
  testOptions(
    { baseUrl: url, tokenUrl: url + FAKE_TOKEN_PATH },
    { timeouts: { postMs: 150, getMs: 150 }, ...over },
  );

describe("V10 open() (onboarding)", () => {
  it("O1: create times out after applying, then 500; retries reuse one key; one PoS; beacon read back", async () => {
    const model = posService({ create: ["hang", "500"] });
    fake = await startFakeService(model.handler);
    let keys = 0;
    const driver = createV10Driver(
      opts(fake.url, {
        clock: new RecordingClock(),
        storeId: null,
        merchantBrandId: "POSDK99999",
        merchantLocationId: "88888",
        newKey: () => `pos-key-${++keys}`,
      }),
    );
    const id = await driver.open();
    expect(id).toEqual({ posId: "pos-1", beaconId: "gen-beacon-1", name: "Vending 1" });
    expect(model.poses.size).toBe(1);
    expect(model.poses.get("pos-1")?.storeId).toBe("store-9");
    const creates = fake.requests.filter((r) => r.method === "POST" && r.path === "/v10/pointofsales");
    expect(creates.map((r) => r.headers["x-service-idempotency-key"])).toEqual([
      "pos-key-1",
      "pos-key-1",
      "pos-key-1",
    ]);
    expect(creates[0]?.json).not.toHaveProperty("beaconId");

    // Idempotent: a second open finds the PoS and creates nothing.
    expect(await driver.open()).toEqual(id);
    expect(keys).toBe(1);
    await driver.close();
  });

  it("keeps a matching PoS; deletes and re-creates it when the configured beacon differs (DELETE retried, O2)", async () => {
    const model = posService({ del: ["500"] });
    fake = await startFakeService(model.handler);
    const first = createV10Driver(
      opts(fake.url, { clock: new RecordingClock(), beaconId: "123456789012345" }),
    );
    const a = await first.open();
    expect(a.beaconId).toBe("123456789012345");
    await first.close();

    const second = createV10Driver(
      opts(fake.url, { clock: new RecordingClock(), beaconId: "123456789012345" }),
    );
    expect(await second.open()).toEqual(a);
    await second.close();

    const third = createV10Driver(
      opts(fake.url, { clock: new RecordingClock(), beaconId: "999999999999999" }),
    );
    const c = await third.open();
    expect(c.beaconId).toBe("999999999999999");
    expect(c.posId).not.toBe(a.posId);
    expect([...model.poses.keys()]).toEqual([c.posId]);
    // The DELETE got a 500 after applying; its retry got 404, which counts as done.
    expect(fake.requests.filter((r) => r.method === "DELETE").length).toBe(2);
    await third.close();
  });

  it("a changed name re-creates the PoS and keeps the service-generated beacon", async () => {
    const model = posService();
    fake = await startFakeService(model.handler);
    const first = createV10Driver(opts(fake.url, { clock: new RecordingClock() }));
    const a = await first.open();
    await first.close();
    const renamed = createV10Driver(opts(fake.url, { clock: new RecordingClock(), posName: "Vending 1b" }));
    const b = await renamed.open();
    expect(b.name).toBe("Vending 1b");
    expect(b.beaconId).toBe(a.beaconId);
    expect(b.posId).not.toBe(a.posId);
    expect(model.poses.size).toBe(1);
    await renamed.close();
  });

  it("fails with notFound when the brand and location name no store", async () => {
    fake = await startFakeService(posService().handler);
    const driver = createV10Driver(
      opts(fake.url, {
        clock: new RecordingClock(),
        storeId: null,
        merchantBrandId: "POSDK00000",
        merchantLocationId: "1",
      }),
    );
    await expect(driver.open()).rejects.toMatchObject({ code: "notFound" });
    await driver.close();
  });
});
