import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import type { PaymentDriver } from "../driver.js";
import { emulatorDriver, pollUntil, startOrder } from "./emulator.test-support.js";

/** Certification payment scenarios P1-P3, P5 and partial capture, against the emulator over HTTP. */
let emu: Emulator;
const drivers: PaymentDriver[] = [];

beforeAll(async () => {
  emu = await startEmulator({ pollDelayMs: 20, refundPollDelayMs: 10 });
});
afterAll(async () => {
  for (const d of drivers) await d.close();
  await emu.close();
});

async function opened() {
  const d = emulatorDriver(emu);
  drivers.push(d);
  const pos = await d.open();
  return { d, pos };
}

const CREDIT = "+4520031801";
const NO_PARTIAL = "+4520031805";
const ledgerOf = (id: string) => emu.ledger().filter((e) => e.id === id || e.paymentId === id);

describe("V10 driver against the emulator: payments", () => {
  it("P1 complete: initiate → poll → Reserved → capture → Captured", async () => {
    const { d, pos } = await opened();
    const ref = await startOrder(d, 1250);
    expect((await d.status(ref)).state).toBe("pending");
    expect(emu.userSimulation.checkin(pos.beaconId, CREDIT).status).toBe(200);
    expect(emu.userSimulation.accept(pos.beaconId, CREDIT).status).toBe(200);
    const reserved = await pollUntil(d, ref, (o) => o.state === "reserved");
    expect(reserved).toMatchObject({ state: "reserved", amount: 1250, partialCapturePossible: true, ref });
    expect(reserved.pollDelayMs).toBe(20);
    expect(emu.stats().earlyPolls).toEqual({}); // pos-v10 §10: never polled sooner than pollDelayInMs
    await d.capture(ref, 1250);
    await d.capture(ref, 1250); // naturally idempotent
    expect((await d.status(ref)).state).toBe("captured");
    expect(ledgerOf(ref.id).map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 1250],
      ["captured", 1250],
    ]);
    expect(await d.findActive()).toEqual([]);
    expect((await d.lookup(ref.orderId))?.state).toBe("captured");
  });

  it("partial capture releases the rest; P5 partial capture not possible → partialCaptureNotPossible", async () => {
    const { d, pos } = await opened();
    const a = await startOrder(d, 2000);
    emu.userSimulation.checkin(pos.beaconId, CREDIT);
    emu.userSimulation.accept(pos.beaconId, CREDIT);
    await pollUntil(d, a, (o) => o.state === "reserved");
    await d.capture(a, 1000);
    expect(ledgerOf(a.id).map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 2000],
      ["captured", 1000],
    ]);

    const b = await startOrder(d, 2000);
    emu.userSimulation.checkin(pos.beaconId, NO_PARTIAL);
    emu.userSimulation.accept(pos.beaconId, NO_PARTIAL);
    const obs = await pollUntil(d, b, (o) => o.state === "reserved");
    expect(obs.partialCapturePossible).toBe(false);
    await expect(d.capture(b, 1000)).rejects.toMatchObject({
      code: "partialCaptureNotPossible",
      details: { status: 409, serviceCode: "1308" },
    });
    await d.capture(b, 2000);
    expect((await d.status(b)).state).toBe("captured");
  });

  it("P2 user rejects: the poll sees cancelled by user; a later cancel still resolves", async () => {
    const { d, pos } = await opened();
    const ref = await startOrder(d, 300);
    emu.userSimulation.checkin(pos.beaconId, CREDIT);
    expect(emu.userSimulation.reject(pos.beaconId).status).toBe(200);
    const last = await pollUntil(d, ref, () => false);
    expect(last).toMatchObject({ state: "cancelled", cancelReason: "user" });
    await expect(d.cancel(ref)).resolves.toBeUndefined(); // 409 1300 → re-query → CancelledByUser
  });

  it("P3 client cancels; repeating the cancel resolves; capture after cancel is a conflict", async () => {
    const { d } = await opened();
    const ref = await startOrder(d, 400);
    await d.cancel(ref);
    await d.cancel(ref);
    expect(await d.status(ref)).toMatchObject({ state: "cancelled", cancelReason: "client" });
    await expect(d.capture(ref, 400)).rejects.toMatchObject({
      code: "conflict",
      details: { serviceCode: "1304" },
    });
    expect(ledgerOf(ref.id)).toEqual([]);
  });

  it("a customer who walks away: the service cancels after inactivity (emulator clock advance)", async () => {
    const { d, pos } = await opened();
    const ref = await startOrder(d, 500);
    emu.userSimulation.checkin(pos.beaconId, CREDIT);
    expect((await d.status(ref)).state).toBe("issued");
    emu.clock.advance(300_001);
    expect(await d.status(ref)).toMatchObject({ state: "cancelled", cancelReason: "service" });
    // The PoS is free again.
    const next = await startOrder(d, 500);
    expect((await d.status(next)).state).toBe("pending");
    await d.cancel(next);
  });

  it("start without open() and mode payment are refused as invalid", async () => {
    const d = emulatorDriver(emu);
    drivers.push(d);
    await expect(startOrder(d, 100)).rejects.toMatchObject({ code: "invalid" });
    await d.open();
    await expect(
      d.start({ orderId: "o-x", amount: 100, idempotencyKey: "k-x", mode: "payment" }),
    ).rejects.toMatchObject({ code: "invalid" });
  });
});
