import { afterEach, describe, expect, it } from "vitest";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";
import { JournalError } from "../journal/journal.js";

let unit: TestUnit | undefined;
afterEach(async () => {
  await unit?.engine.stop();
  unit?.journal.close();
  unit = undefined;
});

function only<T>(xs: T[]): T {
  expect(xs).toHaveLength(1);
  const [x] = xs;
  if (x === undefined) throw new Error("empty");
  return x;
}

describe("vend engine runner (selection first, sim devices, virtual time)", () => {
  it("completes a vend: reserve, approve exactly the price, deliver, capture once", async () => {
    unit = await startTestUnit();
    expect(unit.vmc.requestVend(12, 150)).toBe(true);
    await unit.run();
    expect(unit.engine.current.tag).toBe("idle");
    expect(unit.vmc.vends).toEqual([{ item: 12, price: 150, result: "delivered" }]);
    expect(unit.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 150],
      ["captured", 150],
    ]);
    const s = only(unit.journal.sessions());
    expect(s).toMatchObject({ result: "captured", approvedAmount: 150, vendOutcome: "success" });
    expect(unit.journal.intents(s.id).map((i) => [i.op, i.state])).toEqual([
      ["start", "done"],
      ["capture", "done"],
    ]);
    expect(unit.display.screens.map((x) => x.kind)).toEqual([
      "outOfService",
      "idle",
      "connecting",
      "pay",
      "approveInApp",
      "vending",
      "thankYou",
      "idle",
    ]);
  });

  it("takes session ids from its deps (newId), never from its own source", async () => {
    let n = 0;
    unit = await startTestUnit({ newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}` });
    unit.vmc.requestVend(12, 150);
    await unit.run();
    unit.vmc.requestVend(4, 90);
    await unit.run();
    expect(
      unit.journal
        .sessions()
        .map((s) => s.id)
        .sort(),
    ).toEqual(["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"]);
  });

  it("denies the vend when the customer rejects; nothing is reserved", async () => {
    unit = await startTestUnit({ customer: { action: "reject", afterMs: 2000 } });
    unit.vmc.requestVend(3, 200);
    await unit.run();
    expect(unit.vmc.vends).toEqual([{ item: 3, price: 200, result: "denied" }]);
    expect(unit.payment.ledger).toEqual([]);
    expect(only(unit.journal.sessions())).toMatchObject({
      result: "denied",
      reason: "payment cancelled by user",
    });
  });

  it("cancels the reservation when the machine fails to dispense", async () => {
    unit = await startTestUnit({ dispense: "failure" });
    unit.vmc.requestVend(4, 300);
    await unit.run();
    expect(unit.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "cancelled"]);
    expect(only(unit.journal.sessions())).toMatchObject({ result: "cancelled", vendOutcome: "failure" });
  });

  it("denies and cancels when the customer never pays in time", async () => {
    unit = await startTestUnit({ customer: { action: "ignore" } });
    unit.vmc.requestVend(5, 100);
    await unit.run(70_000);
    expect(unit.vmc.vends).toEqual([{ item: 5, price: 100, result: "denied" }]);
    expect(unit.payment.calls.map((c) => c.op)).toContain("cancel");
    expect(unit.payment.ledger).toEqual([]);
    expect(only(unit.journal.sessions()).result).toBe("cancelled");
  });

  it("cancels the payment when the machine cancels the vend while the customer is paying", async () => {
    unit = await startTestUnit({ customer: { action: "accept", afterMs: 20_000 } });
    unit.vmc.requestVend(6, 250);
    await unit.run(5_000);
    unit.vmc.customerCancel();
    await unit.run();
    expect(unit.payment.calls.filter((c) => c.op === "cancel")).toHaveLength(1);
    expect(unit.vmc.vends.map((v) => v.result)).toEqual(["cancelled"]);
    expect(only(unit.journal.sessions()).approvedAmount).toBeNull();
  });

  it("captures a vend whose outcome is lost in a VMC reset (MDB §7.4.7) and flags it for review", async () => {
    unit = await startTestUnit({ dispense: "none" });
    unit.vmc.requestVend(7, 120);
    await unit.run(5_000);
    expect(unit.engine.current.tag).toBe("vending");
    unit.vmc.reset("brown-out");
    await unit.run();
    expect(unit.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
    const s = only(unit.journal.sessions());
    expect(s).toMatchObject({ result: "captured", vendOutcome: "unknown" });
    expect(s.decision).toMatchObject({ action: "capture", review: true });
  });

  it("resolves a start whose response was lost by looking the order up, never starting twice", async () => {
    unit = await startTestUnit();
    unit.payment.injectFault("start", "lostResponse");
    unit.vmc.requestVend(8, 180);
    await unit.run();
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(1);
    expect(unit.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
  });

  it("never repeats a start the lookup cannot find: the vend is denied and the intent left to recovery", async () => {
    unit = await startTestUnit();
    unit.payment.injectFault("start", "unavailable");
    unit.vmc.requestVend(8, 180);
    await unit.run();
    // budget.ts: the engine sends a start once and resolves an unknown outcome with one lookup.
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(1);
    expect(unit.payment.ledger).toEqual([]);
    const s = only(unit.journal.sessions());
    expect(s.result).toBe("unsettled");
    expect(unit.journal.intents(s.id).find((i) => i.op === "start")?.state).toBe("pending");
    expect(unit.journal.unresolved().map((x) => x.id)).toEqual([s.id]);
  });

  it("resolves a capture whose response was lost by reading the status, never capturing twice", async () => {
    unit = await startTestUnit();
    unit.payment.injectFault("capture", "lostResponse");
    unit.vmc.requestVend(9, 90);
    await unit.run();
    expect(unit.payment.calls.filter((c) => c.op === "capture")).toHaveLength(1);
    expect(unit.payment.ledger.filter((e) => e.kind === "captured")).toHaveLength(1);
    expect(only(unit.journal.sessions()).result).toBe("captured");
  });

  it("leaves a settlement whose capture did not arrive to recovery, with the decision journaled", async () => {
    unit = await startTestUnit();
    unit.payment.injectFault("capture", "unavailable");
    unit.vmc.requestVend(10, 110);
    await unit.run();
    const s = only(unit.journal.sessions());
    expect(s.result).toBe("unsettled");
    expect(s.decision).toMatchObject({ action: "capture", amount: 110 });
    expect(unit.payment.calls.filter((c) => c.op === "capture")).toHaveLength(1);
    expect(unit.journal.unresolved().map((x) => x.id)).toEqual([s.id]);
    const capture = unit.journal.intents(s.id).find((i) => i.op === "capture");
    expect(capture?.state).toBe("pending");
  });

  it("denies a second vend request while a sale is running", async () => {
    unit = await startTestUnit({ customer: { action: "accept", afterMs: 3000 } });
    unit.vmc.requestVend(1, 100);
    await unit.run(1000);
    expect(unit.vmc.requestVend(2, 100)).toBe(false);
    await unit.run();
    expect(unit.journal.sessions()).toHaveLength(1);
  });

  it("sends nothing when the journal cannot record the intent, and goes out of service", async () => {
    unit = await startTestUnit({
      journal: (j) =>
        Object.assign(Object.create(j) as typeof j, {
          recordIntent: () => {
            throw new JournalError("io", "disk I/O error (SQLITE_IOERR_FSYNC)");
          },
        }),
    });
    unit.vmc.requestVend(11, 100);
    await unit.run(10_000);
    expect(unit.payment.calls.filter((c) => c.op === "start")).toHaveLength(0);
    expect(unit.engine.failure?.message).toMatch(/SQLITE_IOERR_FSYNC/);
    expect(unit.vmc.status).toBe("disabled");
    expect(unit.display.last()).toMatchObject({ kind: "outOfService" });
  });

  it("runs many vends back to back with one capture each", async () => {
    unit = await startTestUnit({ customer: { action: "accept", afterMs: 0 } });
    for (let i = 0; i < 20; i++) {
      expect(unit.vmc.requestVend(i, 100 + i)).toBe(true);
      await unit.run(5_000);
    }
    const sessions = unit.journal.sessions();
    expect(sessions.filter((s) => s.result === "captured")).toHaveLength(20);
    const captured = unit.payment.ledger
      .filter((e) => e.kind === "captured")
      .reduce((a, e) => a + e.amount, 0);
    expect(captured).toBe(sessions.reduce((a, s) => a + s.price, 0));
  });
});

describe("journal cost of a vend", () => {
  it("commits a selection-first vend in 3 durable transactions and 2 that do not wait for fsync", async () => {
    unit = await startTestUnit({ customer: { action: "accept", afterMs: 0 } });
    unit.vmc.requestVend(1, 100);
    await unit.run(10_000);
    const before = { all: unit.journal.commits, durable: unit.journal.durableCommits };
    for (let i = 0; i < 10; i++) {
      unit.vmc.requestVend(1, 100);
      await unit.run(10_000);
    }
    expect(unit.journal.sessions().filter((s) => s.result === "captured")).toHaveLength(11);
    // Durable: open+start intent (before the payment request), approval (before the approval line),
    // outcome+decision+capture intent (before the capture request). Not waiting for fsync: the payment id
    // with the start intent's completion, the capture's completion with the close. The VMC's end of the
    // vend's implicit session (vending-mdb §2.4) is an input the engine ignores: no transaction at all.
    expect((unit.journal.durableCommits - before.durable) / 10).toBe(3);
    expect((unit.journal.commits - before.all) / 10).toBe(5);
  });

  it("commits a check-in session in 2 durable transactions plus 1 per vend", async () => {
    unit = await startTestUnit({
      engine: { flow: "checkin", checkinMode: "poll", sessionMax: 2000 },
      customer: { action: "accept", afterMs: 0 },
    });
    const u = unit;
    const session = async (vends: number) => {
      const before = { all: u.journal.commits, durable: u.journal.durableCommits };
      u.payment.customerChecksIn();
      await u.run(3_000);
      for (let i = 0; i < vends; i++) {
        u.vmc.requestVend(1, 100);
        await u.run(2_000);
      }
      u.vmc.finishSession();
      await u.run(5_000);
      return {
        all: u.journal.commits - before.all,
        durable: u.journal.durableCommits - before.durable,
      };
    };
    await session(1);
    const one = await session(1);
    const three = await session(3);
    // Per session: start intent, settlement (decision + intent). Per vend: the approval. The order id, the
    // payment id, each vend outcome and the close commit without waiting for fsync.
    expect(one.durable).toBe(3);
    expect(three.durable - one.durable).toBe(2);
    // Non-durable: order id, payment id, vend outcome (per vend), completion + close.
    expect(one.all - one.durable).toBe(4);
    expect(three.all - three.durable - (one.all - one.durable)).toBe(2);
    expect(unit.journal.sessions().filter((s) => s.result === "captured")).toHaveLength(3);
  });
});
