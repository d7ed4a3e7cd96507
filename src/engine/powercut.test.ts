import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startTestUnit, type TestUnit } from "../../test/support/unit.js";
import { FaultPointError, type FaultPointName } from "../core/faults.js";
import type { Journal } from "../journal/journal.js";
import { openSqliteJournal, type SqliteJournal } from "../journal/sqlite.js";
import { recoverSessions } from "./recovery.js";

// A power cut after a commit that did not wait for fsync (src/journal/DURABILITY.md): the disk keeps the
// journal as it was at the last durable commit (the WAL is appended in order, so that is a prefix of it).
// The tests snapshot the journal's files at every durable commit, cut the power at a point, reopen the
// snapshot and run recovery against the same payment service: each lost write must be rebuilt from the
// service (or, for a vend outcome, by the unknown-outcome policy), with every payment settled exactly once.

let dir: string;
let unit: TestUnit | undefined;
const opened: SqliteJournal[] = [];
afterEach(async () => {
  for (const j of opened.splice(0)) j.close();
  unit?.journal.close();
  unit = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Disk {
  db: Buffer;
  wal: Buffer;
}

/** The journal's files as the disk holds them after the last durable commit. */
class DurableDisk {
  last: Disk;
  /** The disk at the power cut, once cut. */
  cut: Disk | null = null;
  private seen = 0;

  constructor(private readonly path: string) {
    this.last = this.read();
  }

  private read(): Disk {
    const wal = `${this.path}-wal`;
    return { db: readFileSync(this.path), wal: existsSync(wal) ? readFileSync(wal) : Buffer.alloc(0) };
  }

  /** Wraps the journal: after every call that made a durable commit, the files are what survives. */
  wrap(j: SqliteJournal): Journal {
    this.seen = j.durableCommits;
    return new Proxy(j, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result: unknown = Reflect.apply(value, target, args);
          if (target.durableCommits !== this.seen) {
            this.seen = target.durableCommits;
            this.last = this.read();
          }
          return result;
        };
      },
    });
  }

  /** Cuts the power now: what survives is the last durable state. */
  cutNow(): void {
    this.cut ??= this.last;
  }

  /** The journal after the cut, reopened from what survived (in a new directory). */
  reopen(): SqliteJournal {
    const disk = this.cut ?? expect.unreachable("no power cut");
    const path = join(mkdtempSync(join(dir, "after-")), "journal.db");
    writeFileSync(path, disk.db);
    if (disk.wal.length > 0) writeFileSync(`${path}-wal`, disk.wal);
    const j = openSqliteJournal({ path, unitId: "vm-test", clock: unit?.clock ?? expect.unreachable() });
    opened.push(j);
    return j;
  }
}

/** A unit on a file journal whose power is cut at `point` (the engine stops there, as the board does). */
async function unitCutAt(point: FaultPointName | null, opts: Parameters<typeof startTestUnit>[0] = {}) {
  dir = mkdtempSync(join(tmpdir(), "vendd-powercut-"));
  const path = join(dir, "journal.db");
  let disk: DurableDisk | undefined;
  unit = await startTestUnit({
    ...opts,
    journalPath: path,
    journal: (j) => {
      disk = new DurableDisk(path);
      return disk.wrap(j);
    },
    // Powered off, the unit sends nothing more: every call of the old engine fails from the cut on.
    payment: (p) =>
      new Proxy(p, {
        get: (target, prop, receiver) => {
          const value: unknown = Reflect.get(target, prop, receiver);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) =>
            disk?.cut === null ? Reflect.apply(value, target, args) : Promise.reject(new Error("power off"));
        },
      }),
    faults: {
      hit(name) {
        if (name !== point || disk === undefined || disk.cut !== null) return;
        disk.cutNow();
        throw new FaultPointError(`power cut at ${name}`);
      },
    },
  });
  if (disk === undefined) throw new Error("journal not wrapped");
  return { unit, disk };
}

async function recover(j: Journal, t: TestUnit) {
  return recoverSessions(
    j,
    {
      payment: t.payment,
      logger: pino({ level: "silent" }),
      signal: new AbortController().signal,
    },
    { unknownOutcome: "capture", paymentMode: "reservation" },
  );
}

describe("power cut after a commit that did not wait for fsync", () => {
  it("a lost payment id and start completion: recovery finds the payment by its order id and releases it", async () => {
    const { unit: t, disk } = await unitCutAt("start.answered", {
      customer: { action: "accept", afterMs: 0 },
    });
    t.vmc.requestVend(3, 150);
    await t.run(5_000);
    expect(t.engine.broken).toBe(true);
    // Before the cut the journal had the payment id; after it, only the open session and its start intent.
    const live = t.journal.sessions()[0] ?? expect.unreachable();
    expect(live.paymentId).not.toBeNull();
    const j = disk.reopen();
    const lost = j.session(live.id) ?? expect.unreachable("the session (durable) survives");
    expect(lost.paymentId).toBeNull();
    expect(j.intents(live.id).map((i) => [i.op, i.state])).toEqual([["start", "pending"]]);
    const report = await recover(j, t);
    expect(report.resolved).toEqual([expect.objectContaining({ result: "cancelled" })]);
    expect(j.session(live.id)?.paymentId).toBe(live.paymentId);
    expect(t.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 150],
      ["cancelled", 150],
    ]);
    expect(t.vmc.vends.filter((v) => v.result === "delivered")).toEqual([]);
    expect(j.unresolved()).toEqual([]);
  });

  it("a lost capture completion and close: recovery asks the service and settles exactly once", async () => {
    const { unit: t, disk } = await unitCutAt("settle.answered", {
      customer: { action: "accept", afterMs: 0 },
    });
    t.vmc.requestVend(3, 150);
    await t.run(10_000);
    expect(t.engine.broken).toBe(true);
    expect(t.vmc.vends).toEqual([{ item: 3, price: 150, result: "delivered" }]);
    const live = t.journal.sessions()[0] ?? expect.unreachable();
    expect(live.result).toBe("captured");
    const j = disk.reopen();
    // The decision and its intent were durable; the completion and the close were not.
    expect(j.session(live.id)).toMatchObject({
      result: null,
      vendOutcome: "success",
      decision: { action: "capture", amount: 150 },
    });
    expect(j.intents(live.id).map((i) => [i.op, i.state])).toEqual([
      ["start", "done"],
      ["capture", "pending"],
    ]);
    const report = await recover(j, t);
    expect(report.resolved).toEqual([expect.objectContaining({ result: "captured" })]);
    expect(t.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 150],
      ["captured", 150],
    ]);
    expect(j.unresolved()).toEqual([]);
  });

  it("a lost vend outcome in a check-in session: the unknown-outcome policy settles it, flagged", async () => {
    const { unit: t, disk } = await unitCutAt(null, {
      engine: { flow: "checkin", checkinMode: "poll", sessionMax: 2000 },
      customer: { action: "accept", afterMs: 0 },
    });
    t.payment.customerChecksIn();
    await t.run(3_000);
    t.vmc.requestVend(4, 300);
    await t.run(2_000);
    // The vend was delivered and its outcome committed without fsync; the power goes now.
    expect(t.engine.current.tag).toBe("session");
    const live = t.journal.sessions()[0] ?? expect.unreachable();
    expect(t.journal.vends(live.id).map((v) => v.outcome)).toEqual(["success"]);
    disk.cutNow();
    const j = disk.reopen();
    expect(j.vends(live.id).map((v) => v.outcome)).toEqual([null]);
    const report = await recover(j, t);
    expect(report.resolved).toEqual([expect.objectContaining({ result: "captured" })]);
    expect(j.session(live.id)?.decision).toMatchObject({ action: "capture", amount: 300, review: true });
    expect(t.payment.ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 2000],
      ["captured", 300],
    ]);
  });
});
