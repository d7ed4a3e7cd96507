import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import type { PaymentDriver, PaymentRef } from "../driver.js";
import { emulatorDriver, pollUntil, startOrder } from "./emulator.test-support.js";
import type { V10DriverOptions } from "./options.js";

/** 1301 recovery (P4), refunds (R1), faults and token expiry, against the emulator over HTTP. */
let emu: Emulator;
const drivers: PaymentDriver[] = [];

beforeAll(async () => {
  emu = await startEmulator({ pollDelayMs: 20, refundPollDelayMs: 10 });
});
afterEach(() => emu.faults.clear());
afterAll(async () => {
  for (const d of drivers) await d.close();
  await emu.close();
});

async function opened(over: Partial<V10DriverOptions> = {}) {
  const d = emulatorDriver(emu, over);
  drivers.push(d);
  const pos = await d.open();
  return { d, pos };
}

const CREDIT = "+4520031801";
const entries = (id: string) => emu.ledger().filter((e) => e.id === id || e.paymentId === id);

async function reserve(d: PaymentDriver, beaconId: string, amount: number): Promise<PaymentRef> {
  const ref = await startOrder(d, amount);
  emu.userSimulation.checkin(beaconId, CREDIT);
  emu.userSimulation.accept(beaconId, CREDIT);
  await pollUntil(d, ref, (o) => o.state === "reserved");
  return ref;
}

describe("V10 driver against the emulator: recovery and refunds", () => {
  it("P4 1301, active payment not owned: cancelled, new payment initiated with a new key", async () => {
    const { d } = await opened();
    const stale = await startOrder(d, 100, "stale-order");
    const fresh = await startOrder(d, 200, "fresh-order");
    expect(fresh.id).not.toBe(stale.id);
    expect(await d.status(stale)).toMatchObject({ state: "cancelled", cancelReason: "client" });
    expect((await d.findActive()).map((o) => o.ref.id)).toEqual([fresh.id]);
    await d.cancel(fresh);
  });

  it("1301 with the active payment owned by a live session: busy, payment untouched", async () => {
    const { d } = await opened({ ownsOrder: (o) => o === "live-order" });
    const live = await startOrder(d, 100, "live-order");
    await expect(startOrder(d, 200)).rejects.toMatchObject({
      code: "busy",
      details: { serviceCode: "1301" },
    });
    expect((await d.status(live)).state).toBe("pending");
    await d.cancel(live);
  });

  it("R1 refunds: full and partial, polled to Reserved then captured; too much is refused", async () => {
    const { d, pos } = await opened();
    const a = await reserve(d, pos.beaconId, 1000);
    await d.capture(a, 1000);
    const full = await d.refund({
      ref: a,
      refundOrderId: "rf-a",
      amount: 1000,
      idempotencyKey: randomUUID(),
    });
    expect(full).toMatchObject({ state: "captured", remainder: null });

    const b = await reserve(d, pos.beaconId, 3000);
    await d.capture(b, 3000);
    const key = randomUUID();
    const part = await d.refund({ ref: b, refundOrderId: "rf-b1", amount: 1000, idempotencyKey: key });
    // Same key again: the service returns the same refund; capturing it again is a no-op.
    const again = await d.refund({ ref: b, refundOrderId: "rf-b1", amount: 1000, idempotencyKey: key });
    expect(again.refundId).toBe(part.refundId);
    await expect(
      d.refund({ ref: b, refundOrderId: "rf-b2", amount: 2500, idempotencyKey: randomUUID() }),
    ).rejects.toMatchObject({ code: "refundRefused", details: { serviceCode: "1367" } });
    const refunded = emu.ledger().filter((e) => e.kind === "refunded");
    expect(refunded.map((e) => [e.paymentId, e.amount])).toEqual([
      [a.id, 1000],
      [b.id, 1000],
    ]);
  });

  for (const fault of ["reset", "lost", "500"] as const) {
    it(`initiate ${fault} after apply: retried with the same key, exactly one reservation`, async () => {
      const { d, pos } = await opened();
      emu.faults.add({ method: "POST", path: "/v10/payments", fault, applied: true, count: 1 });
      const ref = await reserve(d, pos.beaconId, 700);
      await d.capture(ref, 700);
      const ledger = entries(ref.id);
      expect(ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
      expect(emu.ledger().filter((e) => e.orderId === ref.orderId && e.kind === "reserved").length).toBe(1);
      expect(emu.stats().faults[fault]).toBeGreaterThanOrEqual(1);
    });
  }

  it("capture answered 500 after apply and a hung status poll: retried, one capture", async () => {
    const { d, pos } = await opened({ timeouts: { postMs: 500, getMs: 100 } });
    const ref = await reserve(d, pos.beaconId, 900);
    emu.faults.add({
      method: "POST",
      path: "/v10/payments/*/capture",
      fault: "500",
      applied: true,
      count: 1,
    });
    await d.capture(ref, 900);
    emu.faults.add({ method: "GET", path: "/v10/payments/*", fault: "hang", count: 1 });
    const t0 = performance.now();
    expect((await d.status(ref)).state).toBe("captured");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
    expect(entries(ref.id).map((e) => e.kind)).toEqual(["reserved", "captured"]);
  });

  it("an expired token is refused with 401; the driver fetches a new one and repeats the call", async () => {
    const { d } = await opened();
    const before = emu.stats().byRoute["POST /integrator-authentication/connect/token"] ?? 0;
    emu.clock.advance(3 * 3600_000); // emulator time only: the driver still believes its token valid
    expect((await d.checkin()).checkedIn).toBe(false);
    expect(emu.stats().byRoute["POST /integrator-authentication/connect/token"]).toBe(before + 1);
  });
});
