import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPaymentError } from "../../../src/payment/errors.js";
import {
  type ContractWorld,
  KINDS,
  pollUntil,
  reserve,
  startContractWorld,
  startRequest,
  USERS,
} from "./support.js";

/**
 * Contract: the payment lifecycle, the same scenarios against both drivers and the emulator (driver.ts
 * PaymentDriver). Where the interfaces differ, the difference is asserted, not skipped.
 */
let w: ContractWorld;
beforeAll(async () => {
  w = await startContractWorld();
});
afterAll(() => w.close());

describe.each(KINDS)("%s driver: lifecycle", (kind) => {
  it("complete: pending → issued → reserved → capture → one reservation, one capture", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await c.driver.start(startRequest(`${kind}-done`, 1250));
    expect(ref).toMatchObject({ orderId: `${kind}-done`, mode: "reservation" });
    expect(await c.driver.status(ref)).toMatchObject({ ref, state: "pending", amount: 1250 });
    expect(w.emu.userSimulation.checkin(c.pos.beaconId, USERS.credit).status).toBe(200);
    expect((await c.driver.status(ref)).state).toBe("issued");
    expect(w.emu.userSimulation.accept(c.pos.beaconId, USERS.credit).status).toBe(200);
    const reserved = await pollUntil(c.driver, ref, (o) => o.state === "reserved");
    expect(reserved).toMatchObject({ state: "reserved", amount: 1250 });
    await c.driver.capture(ref, 1250);
    expect(w.ledger(ref.orderId)).toEqual([
      ["reserved", 1250],
      ["captured", 1250],
    ]);
    // The older interface has no "captured" status: a captured reservation still reads Done (100) and
    // stays the PoS's current reservation (legacy README "Behaviour"); V10 reports Captured.
    const after = await c.driver.status(ref);
    const active = await c.driver.findActive();
    if (kind === "v10") {
      expect(after.state).toBe("captured");
      expect(active).toEqual([]);
    } else {
      expect(after.state).toBe("reserved");
      expect(active.map((o) => [o.ref.orderId, o.state])).toEqual([[ref.orderId, "reserved"]]);
    }
  });

  it("user rejects: cancelled by the user, nothing reserved; a later client cancel resolves", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await c.driver.start(startRequest(`${kind}-reject`, 300));
    w.emu.userSimulation.checkin(c.pos.beaconId, USERS.credit);
    expect(w.emu.userSimulation.reject(c.pos.beaconId).status).toBe(200);
    expect(await c.driver.status(ref)).toMatchObject({ state: "cancelled", cancelReason: "user" });
    await expect(c.driver.cancel(ref)).resolves.toBeUndefined();
    expect(w.ledger(ref.orderId)).toEqual([]);
  });

  it("user walks away: the service cancels after inactivity (emulator time), nothing reserved", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await c.driver.start(startRequest(`${kind}-walk`, 500));
    w.pay(c.pos, USERS.walksAway); // checks in; the accept is ignored
    expect((await c.driver.status(ref)).state).toBe("issued");
    w.emu.clock.advance(300_001); // pos-v10: 300 s inactivity; pos-legacy §6: 20/30/60 for 300 s → 40
    const obs = await c.driver.status(ref);
    expect(obs.state).toBe("cancelled");
    // V10 says who cancelled (CancelledByService); the older interface's 40 does not, and the driver
    // reports every 40 as "user" (legacy README "Behaviour").
    expect(obs.cancelReason).toBe(kind === "v10" ? "service" : "user");
    await expect(c.driver.cancel(ref)).resolves.toBeUndefined();
    expect(w.ledger(ref.orderId)).toEqual([]);
  });

  it("user walks away: the client cancels first; the PoS is free for the next payment", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await c.driver.start(startRequest(`${kind}-walk2`, 500));
    w.pay(c.pos, USERS.walksAway);
    await c.driver.cancel(ref);
    await c.driver.cancel(ref);
    // V10 keeps the payment as CancelledByClient; the older interface deletes an unreserved reservation,
    // which then reads 10 ("unknown", pending) like an order never started (emulator legacy README).
    const obs = await c.driver.status(ref);
    if (kind === "v10") expect(obs).toMatchObject({ state: "cancelled", cancelReason: "client" });
    else expect(obs.state).toBe("pending");
    expect(await c.driver.lookup(ref.orderId)).toBeNull();
    const next = await c.driver.start(startRequest(`${kind}-walk3`, 700));
    expect((await c.driver.status(next)).state).toBe("pending");
    await c.driver.cancel(next);
    expect(w.ledger(ref.orderId)).toEqual([]);
  });

  it("client cancel of a reservation releases it once; a capture after it is refused", async () => {
    const c = await w.connect(w.unit(kind));
    const ref = await reserve(w, c, `${kind}-release`, 700);
    await c.driver.cancel(ref);
    await c.driver.cancel(ref);
    expect((await c.driver.status(ref)).state).toBe("cancelled");
    const err = await c.driver.capture(ref, 700).catch((e: unknown) => e);
    expect(isPaymentError(err, "conflict")).toBe(true);
    expect(w.ledger(ref.orderId)).toEqual([
      ["reserved", 700],
      ["cancelled", 700],
    ]);
    expect(await c.driver.findActive()).toEqual([]);
  });

  it("check-in query: V10 reports a waiting customer; the older interface has none", async () => {
    const c = await w.connect(w.unit(kind, { flow: "checkin" }));
    expect(await c.driver.checkin()).toMatchObject({ checkedIn: false });
    if (kind === "v10") {
      expect(w.emu.userSimulation.checkin(c.pos.beaconId, USERS.credit).status).toBe(200);
      expect(await c.driver.checkin()).toMatchObject({ checkedIn: true });
      return;
    }
    // pos-legacy: no check-in operation. Presence shows through status(): a start waits in AwaitCheckIn
    // (30, pending) and turns Issued (20) when the customer checks in.
    expect(await c.driver.checkin()).toEqual({ checkedIn: false, pollDelayMs: 1000 });
    const ref = await c.driver.start(startRequest("legacy-presence", 100));
    expect((await c.driver.status(ref)).state).toBe("pending");
    w.emu.userSimulation.checkin(c.pos.beaconId, USERS.credit);
    expect(await c.driver.checkin()).toEqual({ checkedIn: false, pollDelayMs: 1000 });
    expect((await c.driver.status(ref)).state).toBe("issued");
    await c.driver.cancel(ref);
  });
});
