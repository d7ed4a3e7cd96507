import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";
import { ManualClock } from "../core/clock.js";
import type { PaymentDriver, PaymentRef, StartRequest } from "../payment/driver.js";
import { openSqliteJournal } from "./sqlite.js";

let dir: string;
let unit: TestUnit | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-journal-"));
});
afterEach(async () => {
  await unit?.engine.stop();
  unit?.journal.close();
  unit = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** An independent read-only connection: it sees only committed transactions. */
function peek<T>(path: string, sql: string, ...args: unknown[]): T | undefined {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).get(...args) as T | undefined;
  } finally {
    db.close();
  }
}

describe("sqlite journal", () => {
  it("runs WAL with synchronous=FULL, verified after a write and after reopening", () => {
    const path = join(dir, "j.db");
    const clock = new ManualClock();
    const j = openSqliteJournal({ path, unitId: "vm-1", clock });
    j.openSession({
      id: "s",
      orderId: j.nextOrderId(),
      flow: "selection",
      item: 1,
      price: 100,
      driver: "sim",
    });
    j.close();
    const j2 = openSqliteJournal({ path, unitId: "vm-1", clock });
    expect(j2.session("s")?.price).toBe(100);
    expect(j2.integrityCheck()).toBe("ok");
    j2.close();
    const raw = new Database(path);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("commits a non-durable transaction with synchronous=NORMAL and goes back to FULL after it", () => {
    const j = openSqliteJournal({ path: join(dir, "j.db"), unitId: "vm-1", clock: new ManualClock() });
    const levels: number[] = [];
    const orderId = j.atomically(
      () => {
        levels.push(j.synchronous);
        return j.nextOrderId();
      },
      { durable: false },
    );
    j.atomically(() => {
      levels.push(j.synchronous);
      j.openSession({ id: "s", orderId, flow: "selection", item: 1, price: 100, driver: "sim" });
      j.recordIntent({ sessionId: "s", op: "start", orderId, paymentId: null, amount: 100 });
    });
    levels.push(j.synchronous);
    expect(levels).toEqual([1, 2, 2]);
    expect([j.commits, j.durableCommits]).toEqual([2, 1]);
    // A write alone commits by its class: an event does not wait for fsync, a decision does.
    j.event("s", "note");
    j.decide("s", { action: "cancel", amount: 100, reason: "test", review: false });
    expect([j.commits, j.durableCommits]).toEqual([4, 2]);
    // A transaction that writes nothing is no commit.
    j.atomically(() => j.session("s"), { durable: false });
    expect(j.commits).toBe(4);
    expect(j.synchronous).toBe(2);
    j.close();
  });

  it("refuses a durable write in a non-durable transaction and rolls the transaction back", () => {
    const j = openSqliteJournal({ path: join(dir, "j.db"), unitId: "vm-1", clock: new ManualClock() });
    const orderId = j.nextOrderId();
    j.openSession({ id: "s", orderId, flow: "selection", item: 1, price: 100, driver: "sim" });
    const before = j.commits;
    for (const write of [
      () => j.recordIntent({ sessionId: "s", op: "start", orderId, paymentId: null, amount: 100 }),
      () => j.approveVend("s", 1, 100),
      () => j.decide("s", { action: "capture", amount: 100, reason: "test", review: false }),
    ]) {
      expect(() =>
        j.atomically(
          () => {
            j.event("s", "before");
            write();
          },
          { durable: false },
        ),
      ).toThrow(expect.objectContaining({ code: "durability" }));
    }
    expect(j.commits).toBe(before);
    expect(j.intents("s")).toEqual([]);
    expect(j.session("s")).toMatchObject({ approvedAmount: null, decision: null });
    expect(j.synchronous).toBe(2);
    j.close();
  });

  it("allocates unique order ids that fit both interfaces (≤ 32 characters)", () => {
    const j = openSqliteJournal({ path: ":memory:", unitId: "vm-000000001", clock: new ManualClock() });
    const ids = new Set(Array.from({ length: 500 }, () => j.nextOrderId()));
    expect(ids.size).toBe(500);
    for (const id of ids) expect(id.length).toBeLessThanOrEqual(32);
    j.close();
  });

  it("commits each payment intent, with its idempotency key, before the outbound call is made", async () => {
    const path = join(dir, "unit.db");
    const seen: string[] = [];
    const checkStart = (req: StartRequest) => {
      const row = peek<{ state: string; amount: number }>(
        path,
        "SELECT state, amount FROM intents WHERE idempotency_key = ? AND op = 'start'",
        req.idempotencyKey,
      );
      expect(row).toEqual({ state: "pending", amount: req.amount });
      seen.push("start");
    };
    const checkSettle = (ref: PaymentRef, op: string) => {
      const row = peek<{ state: string }>(
        path,
        "SELECT state FROM intents WHERE payment_id = ? AND op = ?",
        ref.id,
        op,
      );
      expect(row?.state).toBe("pending");
      const decided = peek<{ decision: string }>(
        path,
        "SELECT decision FROM sessions WHERE payment_id = ?",
        ref.id,
      );
      expect(decided?.decision).toBe(op);
      seen.push(op);
    };
    unit = await startTestUnit({
      journalPath: path,
      payment: (p): PaymentDriver =>
        Object.assign(Object.create(p) as PaymentDriver, {
          start: (req: StartRequest) => {
            checkStart(req);
            return p.start(req);
          },
          capture: (ref: PaymentRef, amount: number) => {
            checkSettle(ref, "capture");
            return p.capture(ref, amount);
          },
        }),
    });
    const approve = unit.vmc.approveVend.bind(unit.vmc);
    unit.vmc.approveVend = async (amount) => {
      const row = peek<{ approved_amount: number }>(path, "SELECT approved_amount FROM sessions");
      expect(row?.approved_amount).toBe(amount);
      seen.push("approve");
      return approve(amount);
    };
    unit.vmc.requestVend(1, 150);
    await unit.run();
    expect(seen).toEqual(["start", "approve", "capture"]);
    expect(unit.journal.sessions()[0]?.result).toBe("captured");
  });

  it("keeps a committed intent when the process is killed right after the write (SIGKILL)", () => {
    const built = resolve("dist/src/journal/sqlite.js");
    expect(existsSync(built), "run `npm run build` first (npm test does it in pretest)").toBe(true);
    const path = join(dir, "killed.db");
    const script = `
      import { openSqliteJournal } from ${JSON.stringify(built)};
      const clock = { now: () => 1, setTimer: () => ({ cancel() {} }), sleep: async () => {} };
      const j = openSqliteJournal({ path: ${JSON.stringify(path)}, unitId: "vm-k", clock });
      j.openSession({ id: "s", orderId: "vm-k-1", flow: "selection", item: 1, price: 100, driver: "sim" });
      const i = j.recordIntent({ sessionId: "s", op: "start", orderId: "vm-k-1", paymentId: null, amount: 100 });
      process.stdout.write(i.idempotencyKey);
      process.kill(process.pid, "SIGKILL");
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.signal).toBe("SIGKILL");
    const key = r.stdout.trim();
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const j = openSqliteJournal({ path, unitId: "vm-k", clock: new ManualClock() });
    expect(j.intents("s").map((i) => [i.idempotencyKey, i.state])).toEqual([[key, "pending"]]);
    expect(j.unresolved().map((s) => s.id)).toEqual(["s"]);
    expect(j.integrityCheck()).toBe("ok");
    j.close();
  });

  it("refuses a journal written by a newer vendd", () => {
    const path = join(dir, "new.db");
    const raw = new Database(path);
    raw.pragma("user_version = 99");
    raw.close();
    expect(() => openSqliteJournal({ path, unitId: "vm", clock: new ManualClock() })).toThrow(/newer/);
  });
});

describe("journal retention and the event log", () => {
  const DAY = 86_400_000;
  function journalWith(clock: ManualClock) {
    const j = openSqliteJournal({ path: ":memory:", unitId: "vm-ret", clock });
    const session = (id: string, close: "captured" | "unsettled" | null) => {
      j.openSession({ id, orderId: j.nextOrderId(), flow: "selection", item: 1, price: 100, driver: "sim" });
      j.recordIntent({ sessionId: id, op: "start", orderId: id, paymentId: null, amount: 100 });
      j.approveVend(id, 1, 100);
      j.event(id, "opened");
      if (close !== null) j.closeSession(id, close, "test");
    };
    return { j, session };
  }

  it("deletes old settled sessions in batches and never an open or unsettled one", () => {
    const clock = new ManualClock();
    const { j, session } = journalWith(clock);
    for (let i = 0; i < 25; i++) session(`old-${i}`, "captured");
    session("old-open", null);
    session("old-unsettled", "unsettled");
    clock.advance(100 * DAY);
    session("new", "captured");
    expect(j.retain(clock.now() - 90 * DAY, 10)).toBe(25);
    expect(
      j
        .sessions()
        .map((s) => s.id)
        .sort(),
    ).toEqual(["new", "old-open", "old-unsettled"]);
    expect(j.intents("old-3")).toEqual([]);
    expect(j.vends("old-3")).toEqual([]);
    expect(
      j
        .unresolved()
        .map((s) => s.id)
        .sort(),
    ).toEqual(["old-open", "old-unsettled"]);
    j.close();
  });

  it("refuses to change an event once written (append-only)", () => {
    const path = join(dir, "events.db");
    const j = openSqliteJournal({ path, unitId: "vm-ev", clock: new ManualClock() });
    j.event(null, "boot", { n: 1 });
    j.close();
    const raw = new Database(path);
    expect(() => raw.prepare("UPDATE events SET type = 'x'").run()).toThrow(/append-only/);
    raw.close();
  });
});
