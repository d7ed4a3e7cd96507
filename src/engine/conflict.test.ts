import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";
import { isConflict } from "../journal/journal.js";
import type { PaymentDriver, PaymentRef } from "../payment/driver.js";
import { recoverSessions } from "./recovery.js";

// Issue 10, defect 1: a settlement that conflicts with what the service already did (another process
// captured the payment a failed vend was to release, or released what was to be captured) is logged at error
// level, flagged for review, left unsettled, and never "fixed" by a further request.

let unit: TestUnit | undefined;
afterEach(async () => {
  await unit?.engine.stop();
  unit?.journal.close();
  unit = undefined;
});

/** A logger whose JSON lines are kept for assertions. */
function recordingLogger() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const logger = pino({ level: "info" }, { write: (l: string) => lines.push(JSON.parse(l)) });
  return { logger, errors: () => lines.filter((l) => l.level >= 50) };
}

/** The sim service, where the first cancel finds the payment already captured by someone else. */
function capturedBehindOurBack(p: PaymentDriver): PaymentDriver {
  let done = false;
  return Object.assign(Object.create(p) as PaymentDriver, {
    cancel: async (ref: PaymentRef, signal?: AbortSignal) => {
      if (!done) {
        done = true;
        await p.capture(ref, 250, signal);
      }
      return p.cancel(ref, signal);
    },
  });
}

describe("settlement conflicts", () => {
  it("engine: a failed vend whose payment was captured elsewhere is flagged, unsettled, logged at error", async () => {
    const rec = recordingLogger();
    unit = await startTestUnit({ dispense: "failure", payment: capturedBehindOurBack, logger: rec.logger });
    unit.vmc.requestVend(3, 250);
    await unit.run();
    const [s] = unit.journal.sessions();
    expect(s?.decision).toMatchObject({ action: "cancel", review: true });
    expect(s?.result).toBe("unsettled");
    expect(s?.reason).toMatch(/^conflict: decided cancel, but the service shows the payment captured/);
    expect(s && isConflict(s)).toBe(true);
    expect(rec.errors().map((l) => l.msg)).toEqual([
      "settlement conflicts with the payment service; flagged for review",
    ]);
    expect(unit.journal.unresolved().map((x) => x.id)).toEqual([s?.id]);

    // The sweeper sees it, sends nothing, and does not log it as new again.
    const calls = unit.payment.calls.length;
    const report = await recoverSessions(
      unit.journal,
      { payment: unit.payment, logger: rec.logger, signal: new AbortController().signal },
      { unknownOutcome: "capture", paymentMode: "reservation" },
    );
    expect(report.conflicts).toEqual([{ orderId: s?.orderId, why: expect.stringMatching(/captured/) }]);
    expect(report.resolved).toEqual([]);
    expect(unit.payment.calls.slice(calls).map((c) => c.op)).toEqual(["status"]);
    expect(rec.errors()).toHaveLength(1);
    expect(unit.payment.ledger.map((e) => e.kind)).toEqual(["reserved", "captured"]);
  });

  it("recovery: a journaled capture of a payment the service shows cancelled is flagged, not settled", async () => {
    const rec = recordingLogger();
    const u = await startTestUnit({ logger: rec.logger });
    unit = u;
    const { journal, payment } = u;
    const orderId = journal.nextOrderId();
    journal.openSession({ id: "s", orderId, flow: "selection", item: 1, price: 300, driver: "sim" });
    const start = journal.recordIntent({
      sessionId: "s",
      op: "start",
      orderId,
      paymentId: null,
      amount: 300,
    });
    const ref = await payment.start({ orderId, amount: 300, idempotencyKey: start.idempotencyKey });
    journal.setPaymentId("s", ref.id);
    journal.approveVend("s", 1, 300);
    journal.recordVend("s", "success");
    journal.decide("s", { action: "capture", amount: 300, reason: "vend delivered", review: false });
    await payment.cancel(ref);
    const deps = { payment, clock: u.clock, logger: rec.logger, signal: new AbortController().signal };
    const run = () =>
      recoverSessions(journal, deps, { unknownOutcome: "capture", paymentMode: "reservation" });
    const first = await run();
    expect(first.conflicts).toHaveLength(1);
    const s = journal.session("s");
    expect(s).toMatchObject({ result: "unsettled", decision: { action: "capture", review: true } });
    expect(s?.reason).toBe("conflict: decided capture, but the service shows the payment cancelled");
    expect(payment.calls.filter((c) => c.op === "capture")).toEqual([]);
    expect(rec.errors()).toHaveLength(1);
    const second = await run();
    expect(second.conflicts).toHaveLength(1);
    expect(rec.errors()).toHaveLength(1);
    expect(journal.intents("s").map((i) => i.op)).toEqual(["start"]);
  });
});
