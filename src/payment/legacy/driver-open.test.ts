import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../core/clock.js";
import { isPaymentError } from "../errors.js";
import { createLegacyDriver } from "./driver.js";
import { legacyTestWorld, POS_ID, UNIT } from "./legacy.test-support.js";

/** open(): registration and unit assignment (pos-legacy §9), including the races the interface allows. */

type Answer = [status: number, body: unknown];
let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

/** A loopback server that answers each operation from its own script and records the operation order. */
async function scripted(script: Record<string, Answer[]>): Promise<{ base: string; calls: string[] }> {
  const calls: string[] = [];
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const op = (req.url ?? "").split("/").pop() ?? "";
      calls.push(op);
      const [status, body] = script[op]?.shift() ?? [200, {}];
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

function driverFor(base: string) {
  return createLegacyDriver({
    baseUrl: base,
    apiVersion: "V08",
    merchantId: "POSDK99999",
    locationId: "88888",
    posId: POS_ID,
    posUnitId: UNIT,
    posName: "Machine 7",
    bulkRef: "",
    captureType: "full",
    apiKey: "k",
    merchantKey: "m",
    clock: systemClock,
    ownsOrder: () => false,
  });
}

describe("open", () => {
  it("RegisterPoS answered 10 'not unique' (registered meanwhile) is resolved by reading the PoS back", async () => {
    const { base, calls } = await scripted({
      ReadPoSAssignPoSUnitId: [
        [400, { StatusCode: 30, StatusText: "PoS does not exist" }],
        [200, { PoSUnitId: UNIT }],
      ],
      RegisterPoS: [[400, { StatusCode: 10, StatusText: "PoSId is not unique" }]],
    });
    const d = driverFor(base);
    expect(await d.open()).toEqual({ beaconId: UNIT, posId: POS_ID, name: "Machine 7" });
    expect(calls).toEqual(["ReadPoSAssignPoSUnitId", "RegisterPoS", "ReadPoSAssignPoSUnitId"]);
    await d.close();
  });

  it("an existing PoS gets its name refreshed and the unit assigned only when it differs", async () => {
    const { base, calls } = await scripted({
      ReadPoSAssignPoSUnitId: [[200, { PoSUnitId: "999999999999999" }]],
    });
    const d = driverFor(base);
    await d.open();
    expect(calls).toEqual(["ReadPoSAssignPoSUnitId", "UpdateRegisteredPoSName", "AssignPoSUnitIdToPos"]);
    await d.close();
  });

  it("a PoS that still cannot be read after registering is notFound", async () => {
    const gone: Answer = [400, { StatusCode: 30, StatusText: "PoS does not exist" }];
    const { base } = await scripted({ ReadPoSAssignPoSUnitId: [gone, gone] });
    const d = driverFor(base);
    expect(await d.open().catch((e) => isPaymentError(e, "notFound"))).toBe(true);
    await d.close();
  });

  it("a lost RegisterPoS answer is resolved by reading back (emulator, reset after apply)", async () => {
    const w = await legacyTestWorld();
    try {
      w.emu.faults.add({ method: "POST", path: "/API/V08/RegisterPoS", fault: "reset", applied: true });
      w.emu.faults.add({
        method: "POST",
        path: "/API/V08/AssignPoSUnitIdToPos",
        fault: "reset",
        applied: true,
      });
      await expect(w.driver.open()).rejects.toSatisfy((e) => isPaymentError(e, "unavailable"));
      // The engine repeats open(); the PoS and its unit already exist, so nothing is created twice.
      expect(await w.driver.open()).toEqual({ beaconId: UNIT, posId: POS_ID, name: "Machine 7" });
      expect(w.emu.stats().byRoute["POST /API/V08/RegisterPoS"]).toBe(1);
      expect(w.emu.stats().byRoute["POST /API/V08/AssignPoSUnitIdToPos"]).toBe(1);
    } finally {
      await w.close();
    }
  });
});
