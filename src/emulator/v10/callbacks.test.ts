import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { V10Kit } from "./testkit.test-support.js";

interface Receiver {
  url: string;
  bodies: unknown[];
  server: Server;
}

/** A loopback endpoint that answers `statuses[i]` to the i-th call (then 200). */
async function receiver(statuses: number[]): Promise<Receiver> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => {
      bodies.push(JSON.parse(text));
      res.writeHead(statuses[bodies.length - 1] ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, bodies, server };
}

async function until(check: () => boolean, ms = 2000): Promise<void> {
  for (let waited = 0; waited < ms && !check(); waited += 10) await new Promise((r) => setTimeout(r, 10));
}

describe("notification-service callbacks (pos-v10 §16)", () => {
  let kit: V10Kit;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    kit = await V10Kit.start({ callbackRetryDelaysMs: [10, 20, 40] });
  });
  afterEach(() => {
    for (const r of receivers.splice(0)) r.server.close();
  });
  afterAll(() => kit.close());

  it("a check-in on a PoS with an alias POSTs the PascalCase body; the client then polls check-in", async () => {
    const rx = await receiver([200]);
    receivers.push(rx);
    kit.emu.registerCallback("alias-a", rx.url);
    const { posId, beaconId } = await kit.createPos({ merchantPosId: "cb-1", callbackAlias: "alias-a" });
    kit.emu.userSimulation.checkin(beaconId, "+4520031801");
    await until(() => rx.bodies.length === 1);
    expect(rx.bodies).toEqual([
      {
        MerchantId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        MerchantBrandId: "POSDK99999",
        MerchantLocationId: "88888",
        MerchantPosId: "cb-1",
        PosId: posId,
      },
    ]);
    expect((await kit.call("GET", `/v10/pointofsales/${posId}/checkin`)).body).toMatchObject({
      isUserCheckedIn: true,
    });
  });

  it("a non-200 answer is retried 3 times, then given up", async () => {
    const rx = await receiver([500, 503, 404, 500, 200]);
    receivers.push(rx);
    kit.emu.registerCallback("alias-b", rx.url);
    const { beaconId } = await kit.createPos({ callbackAlias: "alias-b" });
    const before = kit.emu.stats().callbacks;
    kit.emu.userSimulation.checkin(beaconId, "+4520031801");
    await until(() => kit.emu.stats().callbacks.failed > before.failed);
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.bodies).toHaveLength(4);
    expect(kit.emu.stats().callbacks.attempts - before.attempts).toBe(4);
  });

  it("delivery succeeds on a retry; alias registered over the admin API", async () => {
    const rx = await receiver([500, 200]);
    receivers.push(rx);
    const res = await fetch(`${kit.emu.info.admin}/callbacks`, {
      method: "POST",
      body: JSON.stringify({ alias: "alias-c", url: rx.url }),
    });
    expect(res.status).toBe(200);
    const { beaconId } = await kit.createPos({ callbackAlias: "alias-c" });
    const before = kit.emu.stats().callbacks.delivered;
    kit.emu.userSimulation.checkin(beaconId, "+4520031801");
    await until(() => kit.emu.stats().callbacks.delivered > before);
    expect(rx.bodies).toHaveLength(2);
  });
});
