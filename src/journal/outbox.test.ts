import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalSale } from "../../test/support/journalSales.js";
import { ManualClock } from "../core/clock.js";
import { UnitEvent } from "../core/fleetWire.js";
import { openSqliteJournal, type SqliteJournal } from "./sqlite.js";

const DAY = 86_400_000;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-outbox-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function journal(clock = new ManualClock(1_700_000_000_000), path = ":memory:"): SqliteJournal {
  return openSqliteJournal({ path, unitId: "vm-o", clock, outbox: { currency: "DKK" } });
}

/** A selection sale: start done, one vend approved, captured, closed. */
function sale(j: SqliteJournal, id: string, opts: { close?: boolean; price?: number } = {}): void {
  journalSale(j, { id, item: 3, price: opts.price ?? 150, driver: "v10", close: opts.close });
}

describe("journal outbox", () => {
  it("writes a session event from the journal's rows when the session closes, valid on the wire", () => {
    const j = journal();
    sale(j, "s1");
    const events = j.outboxPending(10);
    expect(events).toHaveLength(1);
    const e = UnitEvent.parse(events[0]);
    expect(e).toMatchObject({ seq: 1, kind: "session" });
    if (e.kind !== "session") throw new Error("kind");
    expect(e.data).toMatchObject({
      sessionId: "s1",
      paymentId: "pay-s1",
      driver: "v10",
      flow: "selection",
      item: 3,
      price: 150,
      result: "captured",
      approved: 150,
      captured: 150,
      refunded: 0,
      currency: "DKK",
      vends: [{ item: 3, price: 150, outcome: "success" }],
      review: false,
    });
    expect(e.data.member).toBeUndefined();
    j.close();
  });

  it("a plan vend's session event carries driver plan and the member's ids, never the badge hash", () => {
    const j = journal();
    const orderId = j.nextOrderId();
    const badge = "ab".repeat(32);
    j.openSession({
      id: "p1",
      orderId,
      flow: "selection",
      item: 4,
      price: 200,
      driver: "plan",
      member: { memberId: "m-1", planId: "plan-1", badge, day: "2023-11-14", month: "2023-11" },
    });
    j.approveVend("p1", 4, 200);
    j.recordVend("p1", "success");
    j.closeSession("p1", "captured", "plan vend");
    const [event] = j.outboxPending(10);
    const e = UnitEvent.parse(event);
    if (e.kind !== "session") throw new Error("kind");
    expect(e.data).toMatchObject({
      sessionId: "p1",
      driver: "plan",
      price: 200,
      result: "captured",
      captured: 0,
      member: { memberId: "m-1", planId: "plan-1" },
    });
    expect(JSON.stringify(e)).not.toContain(badge);
    j.close();
  });

  it("writes nothing when the transaction closing the session rolls back", () => {
    const j = journal();
    sale(j, "s1", { close: false });
    expect(() =>
      j.atomically(
        () => {
          j.closeSession("s1", "captured", "vended");
          throw new Error("boom");
        },
        { durable: false },
      ),
    ).toThrow("boom");
    expect(j.outboxStats()).toEqual({ events: 0, oldestAt: null, lastSeq: 0 });
    expect(j.session("s1")?.closedAt).toBeNull();
    j.close();
  });

  it("closing a session costs no extra commit or fsync (deferred class)", () => {
    const j = journal();
    sale(j, "s1", { close: false });
    const [commits, durable] = [j.commits, j.durableCommits];
    j.closeSession("s1", "captured", "vended");
    expect([j.commits - commits, j.durableCommits - durable]).toEqual([1, 0]);
    expect(j.outboxStats().events).toBe(1);
    j.close();
  });

  it("keeps the event of a session closed just before a SIGKILL", () => {
    const built = resolve("dist/src/journal/sqlite.js");
    expect(existsSync(built), "run `npx tsc -p tsconfig.build.json` first").toBe(true);
    const path = join(dir, "killed.db");
    const script = `
      import { openSqliteJournal } from ${JSON.stringify(built)};
      const clock = { now: () => 5, setTimer: () => ({ cancel() {} }), sleep: async () => {} };
      const j = openSqliteJournal({ path: ${JSON.stringify(path)}, unitId: "vm-k", clock, outbox: { currency: "EUR" } });
      j.openSession({ id: "s", orderId: "vm-k-1", flow: "selection", item: 1, price: 100, driver: "sim" });
      j.closeSession("s", "denied", "refused");
      process.kill(process.pid, "SIGKILL");
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.signal).toBe("SIGKILL");
    const j = openSqliteJournal({
      path,
      unitId: "vm-k",
      clock: new ManualClock(),
      outbox: { currency: "EUR" },
    });
    const [e] = j.outboxPending(10);
    expect(UnitEvent.parse(e)).toMatchObject({
      seq: 1,
      kind: "session",
      data: { sessionId: "s", result: "denied", currency: "EUR" },
    });
    j.close();
  });

  it("re-reports a session when recovery settles it later and when a refund is confirmed after close", () => {
    const j = journal();
    sale(j, "s1", { close: false });
    j.closeSession("s1", "unsettled", "service unreachable");
    j.closeSession("s1", "captured", "settled by recovery");
    const orderId = j.session("s1")?.orderId ?? "";
    const refund = j.recordIntent({
      sessionId: "s1",
      op: "refund",
      orderId,
      paymentId: "pay-s1",
      amount: 150,
    });
    j.completeIntent(refund.id, "done", "refunded");
    const events = j.outboxPending(10).map((e) => UnitEvent.parse(e));
    expect(
      events.map((e) => [e.seq, e.kind === "session" ? [e.data.result, e.data.refunded] : null]),
    ).toEqual([
      [1, ["unsettled", 0]],
      [2, ["captured", 0]],
      [3, ["captured", 150]],
    ]);
    j.close();
  });

  it("reports faults, service and version changes; nothing at all without a fleet outbox", () => {
    const j = journal();
    j.report("fault", { code: "vmcLink", state: "raised", message: "VMC link lost" });
    j.report("service", { state: "outOfService", reason: "vmc" });
    j.report("version", {
      kind: "release",
      bundleId: null,
      version: "1.2.3",
      outcome: "started",
      reason: "",
    });
    expect(j.outboxPending(10).map((e) => UnitEvent.parse(e).kind)).toEqual(["fault", "service", "version"]);
    j.close();
    const plain = openSqliteJournal({ path: ":memory:", unitId: "vm", clock: new ManualClock() });
    expect(plain.report("service", { state: "inService", reason: "" })).toBe(0);
    sale(plain, "s");
    expect(plain.outboxStats()).toEqual({ events: 0, oldestAt: null, lastSeq: 0 });
    plain.close();
  });

  it("marks delivered up to an ack; seq is never reused or lowered after retention, across reopen", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const path = join(dir, "j.db");
    let j = journal(clock, path);
    for (let i = 1; i <= 5; i++) sale(j, `s${i}`);
    expect(j.markDelivered(3)).toBe(3);
    expect(j.outboxPending(10).map((e) => e.seq)).toEqual([4, 5]);
    expect(j.outboxStats()).toMatchObject({ events: 2, lastSeq: 5 });
    expect(j.markDelivered(5)).toBe(2);
    clock.advance(40 * DAY);
    expect(j.retainOutbox(clock.now() - 35 * DAY, clock.now() - 42 * DAY)).toEqual({
      deleted: 5,
      dropped: [],
    });
    j.close();
    j = journal(clock, path);
    sale(j, "s6");
    expect(j.outboxPending(10).map((e) => e.seq)).toEqual([6]);
    j.close();
  });

  it("turns undelivered events beyond the backlog limit into overflow tombstones, keeping every seq", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const j = journal(clock);
    sale(j, "old1");
    sale(j, "old2");
    clock.advance(43 * DAY);
    sale(j, "new");
    const r = j.retainOutbox(clock.now() - 35 * DAY, clock.now() - 42 * DAY);
    expect(r).toEqual({ deleted: 0, dropped: [1, 2] });
    const events = j.outboxPending(10).map((e) => UnitEvent.parse(e));
    expect(events.map((e) => [e.seq, e.kind, e.kind === "fault" ? e.data.code : ""])).toEqual([
      [1, "fault", "outboxOverflow"],
      [2, "fault", "outboxOverflow"],
      [3, "session", ""],
      [4, "fault", "outboxOverflow"],
    ]);
    j.close();
  });

  it("renumbers the undelivered events of a replaced journal above the fleet's committed", () => {
    const j = journal();
    sale(j, "a");
    sale(j, "b");
    j.markDelivered(1);
    expect(j.renumberOutbox(2)).toBe(0);
    expect(j.renumberOutbox(1000)).toBe(1);
    expect(j.outboxPending(10).map((e) => e.seq)).toEqual([1001]);
    sale(j, "c");
    expect(j.outboxPending(10).map((e) => e.seq)).toEqual([1001, 1002]);
    expect(j.outboxStats().lastSeq).toBe(1002);
    j.close();
  });

  it("sends again what a fleet restored from an older backup lacks: delivered events, deleted ones as tombstones", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const j = journal(clock);
    sale(j, "s1");
    sale(j, "s2");
    clock.advance(40 * DAY);
    for (const id of ["s3", "s4", "s5"]) sale(j, id);
    expect(j.markDelivered(5)).toBe(5);
    // Retention deleted the delivered events 1 and 2 (older than 35 days); 3-5 are kept, delivered.
    expect(j.retainOutbox(clock.now() - 35 * DAY, clock.now() - 42 * DAY)).toEqual({
      deleted: 2,
      dropped: [],
    });
    sale(j, "s6");

    // A fleet that has everything delivered lacks nothing: no write, nothing resent.
    expect(j.resendOutbox(5)).toBe(0);
    expect(j.outboxPending(10).map((e) => e.seq)).toEqual([6]);

    // The fleet came back from a backup that had events up to 1 only: 2 (deleted) comes back as a
    // tombstone, 3-5 are sent again, 6 is still pending; every seq once, in order.
    expect(j.resendOutbox(1)).toBe(4);
    const events = j.outboxPending(10).map((e) => UnitEvent.parse(e));
    expect(events.map((e) => [e.seq, e.kind])).toEqual([
      [2, "fault"],
      [3, "session"],
      [4, "session"],
      [5, "session"],
      [6, "session"],
    ]);
    const tomb = events[0];
    if (tomb?.kind !== "fault") throw new Error("kind");
    expect(tomb.data).toMatchObject({ code: "outboxOverflow", state: "raised" });
    expect(tomb.data.message).toMatch(/delivered and then deleted by retention/);
    expect(j.outboxStats()).toMatchObject({ events: 5, lastSeq: 6 });
    // Asked again with the same committed seq: nothing more to send.
    expect(j.resendOutbox(1)).toBe(0);
    j.close();
  });

  it("a fleet restored to nothing of this unit gets a tombstone for every deleted seq", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const j = journal(clock);
    sale(j, "s1");
    sale(j, "s2");
    expect(j.markDelivered(2)).toBe(2);
    clock.advance(40 * DAY);
    expect(j.retainOutbox(clock.now() - 35 * DAY, clock.now() - 42 * DAY)).toEqual({
      deleted: 2,
      dropped: [],
    });
    expect(j.resendOutbox(0)).toBe(2);
    expect(j.outboxPending(10).map((e) => [e.seq, e.kind])).toEqual([
      [1, "fault"],
      [2, "fault"],
    ]);
    j.close();
  });
});
