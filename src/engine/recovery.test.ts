import pino from "pino";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { openSqliteJournal } from "../journal/sqlite.js";
import { SimPaymentDriver } from "../payment/sim.js";
import { recoverSessions } from "./recovery.js";

async function setup() {
  const clock = new ManualClock();
  const journal = openSqliteJournal({ path: ":memory:", unitId: "vm-r", clock });
  const payment = new SimPaymentDriver({ clock, customer: () => ({ action: "accept", afterMs: 0 }) });
  const deps = { payment, clock, logger: pino({ level: "silent" }), signal: new AbortController().signal };
  /** A session as the daemon left it when it was killed. */
  const crashed = async (opts: {
    created: boolean;
    known: boolean;
    approved?: boolean;
    outcome?: "success" | "failure";
  }) => {
    const orderId = journal.nextOrderId();
    const id = `s-${orderId}`;
    journal.openSession({ id, orderId, flow: "selection", item: 1, price: 200, driver: "sim" });
    const intent = journal.recordIntent({
      sessionId: id,
      op: "start",
      orderId,
      paymentId: null,
      amount: 200,
    });
    if (opts.created) {
      const ref = await payment.start({ orderId, amount: 200, idempotencyKey: intent.idempotencyKey });
      await payment.status(ref);
      if (opts.known) journal.setPaymentId(id, ref.id);
    }
    if (opts.approved) journal.approveVend(id, 1, 200);
    if (opts.outcome) journal.recordVend(id, opts.outcome);
    return id;
  };
  const run = () => recoverSessions(journal, deps, { unknownOutcome: "capture", paymentMode: "reservation" });
  return { clock, journal, payment, crashed, run };
}

describe("recovery of unresolved sessions at start-up", () => {
  it("closes a session whose payment was never created as denied", async () => {
    const t = await setup();
    const id = await t.crashed({ created: false, known: false });
    const report = await t.run();
    expect(report.resolved).toEqual([expect.objectContaining({ result: "denied" })]);
    expect(t.journal.session(id)?.closedAt).not.toBeNull();
    expect(t.journal.intents(id)[0]?.state).toBe("failed");
  });

  it("finds a payment whose start response was lost and releases it (never approved)", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: false });
    await t.run();
    expect(t.journal.session(id)?.result).toBe("cancelled");
    expect(t.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "cancelled"]);
  });

  it("captures an approved vend whose outcome was lost, flagged for review (MDB §7.4.7)", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: true, approved: true });
    await t.run();
    const s = t.journal.session(id);
    expect(s?.result).toBe("captured");
    expect(s?.decision).toMatchObject({ action: "capture", review: true });
    expect(t.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
  });

  it("applies the recorded vend outcome: failure cancels, success captures", async () => {
    const t = await setup();
    const failed = await t.crashed({ created: true, known: true, approved: true, outcome: "failure" });
    const ok = await t.crashed({ created: true, known: true, approved: true, outcome: "success" });
    await t.run();
    expect(t.journal.session(failed)?.result).toBe("cancelled");
    expect(t.journal.session(ok)?.result).toBe("captured");
  });

  it("applies a journaled decision exactly once, even when run again", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: true, approved: true, outcome: "success" });
    t.journal.decide(id, { action: "capture", amount: 200, reason: "vend delivered", review: false });
    await t.run();
    await t.run();
    expect(t.payment.ledger.filter((e) => e.kind === "captured")).toHaveLength(1);
    expect(t.journal.unresolved()).toEqual([]);
  });

  it("leaves a session unresolved while the service cannot be reached", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: true, approved: true });
    t.payment.injectFault("status", "unavailable");
    const report = await t.run();
    // Waiting for the service: the daemon keeps the unit out of service until it is settled.
    expect(report.pending).toEqual([expect.objectContaining({ waiting: true })]);
    expect(t.journal.unresolved().map((s) => s.id)).toEqual([id]);
    await t.run();
    expect(t.journal.unresolved()).toEqual([]);
  });

  it("reports a settlement the service contradicts as a conflict, not waiting (a person must look at it)", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: true, approved: true, outcome: "success" });
    const paymentId = t.journal.session(id)?.paymentId ?? expect.unreachable();
    const orderId = t.journal.session(id)?.orderId ?? expect.unreachable();
    t.journal.decide(id, { action: "capture", amount: 200, reason: "vend delivered", review: false });
    // Meanwhile the payment was released at the service: the journaled capture can no longer happen.
    await t.payment.cancel({ id: paymentId, orderId, mode: "reservation" });
    const report = await t.run();
    expect(report.resolved).toEqual([]);
    expect(report.pending).toEqual([]);
    expect(report.conflicts).toEqual([expect.objectContaining({ orderId })]);
    expect(report.conflicts[0]?.why).toMatch(/decided capture, but the service shows the payment cancelled/);
    expect(t.journal.session(id)).toMatchObject({ result: "unsettled", decision: { review: true } });
  });
});

describe("recovery of check-in sessions (multi-vend)", () => {
  it("captures the delivered vends plus, by policy, the one whose outcome was lost", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: true });
    t.journal.approveVend(id, 1, 50);
    t.journal.recordVend(id, "success");
    t.journal.approveVend(id, 2, 30);
    t.journal.recordVend(id, "failure");
    t.journal.approveVend(id, 3, 70);
    await t.run();
    const s = t.journal.session(id);
    expect(s?.decision).toMatchObject({ action: "capture", amount: 120, review: true });
    expect(t.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 200],
      ["captured", 120],
    ]);
  });

  it("releases a session whose vends all failed", async () => {
    const t = await setup();
    const id = await t.crashed({ created: true, known: true });
    t.journal.approveVend(id, 1, 50);
    t.journal.recordVend(id, "failure");
    await t.run();
    expect(t.journal.session(id)?.result).toBe("cancelled");
  });
});
