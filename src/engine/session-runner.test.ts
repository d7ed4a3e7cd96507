import { afterEach, describe, expect, it } from "vitest";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";

let unit: TestUnit | undefined;
afterEach(async () => {
  await unit?.engine.stop();
  unit?.journal.close();
  unit = undefined;
});

const CHECKIN = { flow: "checkin", checkinMode: "poll", sessionMax: 2000 } as const;

describe("vend engine runner (check-in first, multi-vend, virtual time)", () => {
  it("reserves the session maximum on check-in, vends twice, captures the total and releases the rest", async () => {
    unit = await startTestUnit({ engine: CHECKIN, customer: { action: "accept", afterMs: 500 } });
    expect(unit.display.last()).toMatchObject({
      kind: "idle",
      checkinUri: expect.stringContaining("id=100000000000001"),
    });
    unit.payment.customerChecksIn();
    await unit.run(5_000);
    expect(unit.engine.current.tag).toBe("session");
    expect(unit.vmc.sessionFunds).toBe(2000);
    unit.vmc.requestVend(12, 1500);
    await unit.run(2_000);
    unit.vmc.requestVend(7, 400);
    await unit.run(2_000);
    unit.vmc.finishSession();
    await unit.run(5_000);
    expect(unit.vmc.vends.map((v) => v.result)).toEqual(["delivered", "delivered"]);
    expect(unit.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 2000],
      ["captured", 1900],
    ]);
    const [s] = unit.journal.sessions();
    expect(s).toMatchObject({ flow: "checkin", result: "captured", approvedAmount: 1900, price: 2000 });
    expect(unit.journal.vends(s?.id ?? "").map((v) => [v.price, v.outcome])).toEqual([
      [1500, "success"],
      [400, "success"],
    ]);
    expect(unit.engine.current).toMatchObject({ tag: "ready" });
  });

  it("denies a vend above the funds left and keeps the session going", async () => {
    unit = await startTestUnit({ engine: CHECKIN, customer: { action: "accept", afterMs: 0 } });
    unit.payment.customerChecksIn();
    await unit.run(3_000);
    unit.vmc.requestVend(1, 1500);
    await unit.run(2_000);
    unit.vmc.requestVend(2, 600);
    await unit.run(500);
    expect(unit.vmc.vends.at(-1)).toEqual({ item: 2, price: 600, result: "denied" });
    expect(unit.engine.current.tag).toBe("session");
    unit.vmc.finishSession();
    await unit.run(3_000);
    expect(unit.payment.ledger.filter((e) => e.kind === "captured").map((e) => e.amount)).toEqual([1500]);
  });

  it("cancels when the customer ends the session without buying", async () => {
    unit = await startTestUnit({ engine: CHECKIN, customer: { action: "accept", afterMs: 0 } });
    unit.payment.customerChecksIn();
    await unit.run(3_000);
    unit.vmc.finishSession();
    await unit.run(3_000);
    expect(unit.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "cancelled"]);
    expect(unit.journal.sessions()[0]?.result).toBe("cancelled");
  });

  it("cancels before anything is vended when partial capture is not possible and the vend is smaller", async () => {
    unit = await startTestUnit({
      engine: CHECKIN,
      customer: { action: "accept", afterMs: 0 },
      partialCapturePossible: false,
    });
    unit.payment.customerChecksIn();
    await unit.run(3_000);
    unit.vmc.requestVend(3, 500);
    await unit.run(3_000);
    expect(unit.vmc.vends).toEqual([{ item: 3, price: 500, result: "denied" }]);
    expect(unit.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "cancelled"]);
  });

  it("ends an idle session after the customer timer and captures what was vended", async () => {
    unit = await startTestUnit({ engine: CHECKIN, customer: { action: "accept", afterMs: 0 } });
    unit.payment.customerChecksIn();
    await unit.run(3_000);
    unit.vmc.requestVend(4, 800);
    await unit.run(2_000);
    await unit.run(65_000);
    expect(unit.payment.ledger.filter((e) => e.kind === "captured").map((e) => e.amount)).toEqual([800]);
    expect(unit.vmc.sessionFunds).toBeNull();
  });

  it("keeps an idle payment initiated and opens a session when a customer accepts it (idlePayment mode)", async () => {
    unit = await startTestUnit({
      engine: { ...CHECKIN, checkinMode: "idlePayment" },
      customer: { action: "accept", afterMs: 4_000 },
    });
    await unit.run(6_000);
    expect(unit.engine.current.tag).toBe("session");
    unit.vmc.requestVend(5, 700);
    await unit.run(2_000);
    unit.vmc.finishSession();
    await unit.run(3_000);
    expect(unit.payment.ledger.filter((e) => e.kind === "captured").map((e) => e.amount)).toEqual([700]);
    // The next idle payment is already waiting for the next customer.
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(2);
  });
});

describe("out of service by request", () => {
  it("releases the idle payment, disables the VMC, denies vends, and comes back with a new idle payment", async () => {
    unit = await startTestUnit({
      engine: { ...CHECKIN, checkinMode: "idlePayment" },
      customer: { action: "absent" },
    });
    await unit.run(2_000);
    const going = unit.engine.setOutOfService("Service mode");
    await unit.run(5_000);
    await going;
    expect(unit.vmc.status).toBe("disabled");
    expect(unit.display.last()).toEqual({ kind: "outOfService", reason: "Service mode" });
    expect(unit.payment.calls.filter((c) => c.op === "cancel")).toHaveLength(1);
    await unit.run(30_000);
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(1);
    const back = unit.engine.setOutOfService(null);
    await unit.run(2_000);
    await back;
    expect(unit.vmc.status).toBe("enabled");
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(2);
  });

  it("lets a running sale finish before going out of service (selection first)", async () => {
    unit = await startTestUnit({ customer: { action: "accept", afterMs: 1000 } });
    unit.vmc.requestVend(1, 300);
    await unit.run(500);
    const going = unit.engine.setOutOfService("Door open");
    await unit.run(10_000);
    await going;
    expect(unit.journal.sessions()[0]?.result).toBe("captured");
    expect(unit.vmc.status).toBe("disabled");
    expect(unit.vmc.requestVend(2, 100)).toBe(false);
  });
});
