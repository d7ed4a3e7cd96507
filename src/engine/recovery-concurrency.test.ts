import pino from "pino";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { openSqliteJournal } from "../journal/sqlite.js";
import type { PaymentDriver } from "../payment/driver.js";
import { SimPaymentDriver } from "../payment/sim.js";
import { RECOVERY_CONCURRENCY, recoverSessions } from "./recovery.js";

/** `n` sessions left by a crash after the approval: reserved at the service, vend outcome unknown. */
async function crashedUnit(n: number) {
  const clock = new ManualClock();
  const journal = openSqliteJournal({ path: ":memory:", unitId: "vm-c", clock });
  const sim = new SimPaymentDriver({ clock, customer: () => ({ action: "accept", afterMs: 0 }) });
  for (let i = 0; i < n; i++) {
    const orderId = journal.nextOrderId();
    const id = `s-${orderId}`;
    journal.openSession({ id, orderId, flow: "selection", item: 1, price: 100 + i, driver: "sim" });
    const intent = journal.recordIntent({
      sessionId: id,
      op: "start",
      orderId,
      paymentId: null,
      amount: 100 + i,
    });
    const ref = await sim.start({ orderId, amount: 100 + i, idempotencyKey: intent.idempotencyKey });
    await sim.status(ref);
    journal.completeIntent(intent.id, "done", "reserved");
    journal.setPaymentId(id, ref.id);
    journal.approveVend(id, 1, 100 + i);
  }
  return { clock, journal, sim };
}

interface Held {
  op: "status" | "capture";
  orderId: string;
  release: () => void;
}

/** The sim driver with every status and capture call held until the test releases it. */
function gated(
  sim: SimPaymentDriver,
  held: Held[],
  log: { op: string; orderId: string }[],
  flight: { now: number; max: number },
) {
  const hold = async <T>(op: Held["op"], orderId: string, call: () => Promise<T>): Promise<T> => {
    log.push({ op, orderId });
    flight.now++;
    flight.max = Math.max(flight.max, flight.now);
    try {
      await new Promise<void>((release) => held.push({ op, orderId, release }));
      return await call();
    } finally {
      flight.now--;
    }
  };
  const payment: PaymentDriver = Object.assign(Object.create(sim) as SimPaymentDriver, {
    status: (ref: Parameters<PaymentDriver["status"]>[0]) =>
      hold("status", ref.orderId, () => sim.status(ref)),
    capture: (ref: Parameters<PaymentDriver["capture"]>[0], amount: number) =>
      hold("capture", ref.orderId, () => sim.capture(ref, amount)),
  });
  return payment;
}

describe("recovery settles sessions concurrently, each in its own order", () => {
  it("keeps at most RECOVERY_CONCURRENCY sessions in progress, journals each decision before its capture, reports in journal order", async () => {
    const { journal, sim } = await crashedUnit(20);
    const order = journal.unresolved().map((s) => s.orderId);
    const held: Held[] = [];
    const log: { op: string; orderId: string }[] = [];
    const flight = { now: 0, max: 0 };
    const payment = gated(sim, held, log, flight);
    const capturesSeen: { orderId: string; decided: boolean; intentPending: boolean }[] = [];
    let done = false;
    const running = recoverSessions(
      journal,
      { payment, logger: pino({ level: "silent" }), signal: new AbortController().signal },
      { unknownOutcome: "capture", paymentMode: "reservation" },
    ).finally(() => {
      done = true;
    });
    // Release what is held last-in first-out, so sessions finish in a different order than they started.
    for (let round = 0; !done && round < 1000; round++) {
      await new Promise((r) => setImmediate(r));
      for (const h of held.splice(0).reverse()) {
        if (h.op === "capture") {
          const s = journal.unresolved().find((x) => x.orderId === h.orderId);
          const intents = s === undefined ? [] : journal.intents(s.id);
          capturesSeen.push({
            orderId: h.orderId,
            decided: s?.decision?.action === "capture",
            intentPending: intents.some((i) => i.op === "capture" && i.state === "pending"),
          });
        }
        h.release();
      }
    }
    const report = await running;
    expect(flight.max).toBe(RECOVERY_CONCURRENCY);
    expect(report.resolved.map((r) => r.orderId)).toEqual(order);
    expect(report.resolved.every((r) => r.result === "captured")).toBe(true);
    expect(journal.unresolved()).toEqual([]);
    // Each session: status, then capture, once each; the decision and the capture intent journaled first.
    for (const orderId of order)
      expect(log.filter((l) => l.orderId === orderId).map((l) => l.op)).toEqual(["status", "capture"]);
    expect(capturesSeen).toHaveLength(20);
    expect(capturesSeen.every((c) => c.decided && c.intentPending)).toBe(true);
    // Finished out of order (LIFO releases): the report's order is the journal's, not completion's.
    const captureOrder = log.filter((l) => l.op === "capture").map((l) => l.orderId);
    expect(captureOrder).not.toEqual(order);
    expect(sim.ledger.filter((e) => e.kind === "captured")).toHaveLength(20);
  });

  it("stops starting sessions after a journal failure and throws it once those in progress finished", async () => {
    const { journal, sim } = await crashedUnit(12);
    const fail = new Error("disk I/O error");
    let captures = 0;
    const payment: PaymentDriver = Object.assign(Object.create(sim) as SimPaymentDriver, {
      capture: async (ref: Parameters<PaymentDriver["capture"]>[0], amount: number) => {
        captures++;
        return sim.capture(ref, amount);
      },
    });
    const original = journal.closeSession.bind(journal);
    let closes = 0;
    journal.closeSession = (...args: Parameters<typeof journal.closeSession>) => {
      if (++closes === 1) throw fail;
      original(...args);
    };
    await expect(
      recoverSessions(
        journal,
        { payment, logger: pino({ level: "silent" }), signal: new AbortController().signal },
        { unknownOutcome: "capture", paymentMode: "reservation" },
        4,
      ),
    ).rejects.toBe(fail);
    // At most the 4 sessions in progress when the write failed went on; none was started after it.
    expect(captures).toBeGreaterThanOrEqual(1);
    expect(captures).toBeLessThanOrEqual(4);
  });
});
