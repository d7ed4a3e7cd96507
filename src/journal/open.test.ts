import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { JournalError } from "./journal.js";
import { readOwner, writeOwner } from "./owner.js";
import { openSqliteJournal, type SqliteJournal } from "./sqlite.js";

const BUILT = resolve("dist/src/journal/sqlite.js");
let dir: string;
let path: string;
const open: SqliteJournal[] = [];
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-open-"));
  path = join(dir, "journal.db");
});
afterEach(() => {
  for (const j of open.splice(0)) j.close();
  for (const c of children.splice(0)) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function openJournal(clock = new ManualClock(), freeBytes?: (dir: string) => number | null): SqliteJournal {
  const j = openSqliteJournal({ path, unitId: "vm-1", clock, ...(freeBytes ? { freeBytes } : {}) });
  open.push(j);
  return j;
}

function closeAll(): void {
  for (const j of open.splice(0)) j.close();
}

/** The refusal `fn` throws (fails the test when it does not throw a JournalError). */
function refusal(fn: () => unknown): JournalError {
  try {
    fn();
  } catch (err) {
    if (err instanceof JournalError) return err;
    throw err;
  }
  throw new Error("expected a JournalError");
}

/**
 * The journal's bytes and its WAL's, hashed, to prove a refusal changed nothing (a missing WAL and an empty
 * one hold the same: nothing; a read-only look may create the empty companion).
 */
function snapshot(): string {
  const read = (p: string) => (existsSync(p) ? readFileSync(p) : Buffer.alloc(0));
  const hash = (b: Buffer) => createHash("sha256").update(b).digest("hex");
  return `${hash(read(path))}|${hash(read(`${path}-wal`))}`;
}

/** A journal with `n` order ids allocated, closed cleanly (checkpointed). */
function journalWith(n: number): void {
  const j = openJournal();
  for (let i = 0; i < n; i++) j.nextOrderId();
  closeAll();
}

/**
 * Runs the built journal in a child: opens it, allocates `ids` order ids, then closes it or dies by SIGKILL
 * (a crash: what it committed stays in the WAL).
 */
function child(ids: number, end: "close" | "kill"): void {
  expect(existsSync(BUILT), "run `npm run build` first (npm test does it in pretest)").toBe(true);
  const script = `
    import { openSqliteJournal } from ${JSON.stringify(BUILT)};
    const clock = { now: () => Date.now(), setTimer: () => ({ cancel() {} }), sleep: async () => {} };
    const j = openSqliteJournal({ path: ${JSON.stringify(path)}, unitId: "vm-1", clock });
    for (let i = 0; i < ${ids}; i++) j.nextOrderId();
    if (${JSON.stringify(end)} === "close") j.close(); else process.kill(process.pid, "SIGKILL");
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.signal).toBe(end === "kill" ? "SIGKILL" : null);
}

describe("journal ownership: one process, one journal", () => {
  it("refuses a second open in the same process, naming the path and the holder's PID", () => {
    openJournal();
    const err = refusal(() => openJournal());
    expect(err.code).toBe("locked");
    expect(err.message).toContain(`journal ${path} is in use by vendd (PID ${process.pid}, since `);
    expect(err.path).toBe(path);
    expect(err.cause).toBe("in use");
    closeAll();
    expect(() => openJournal()).not.toThrow();
  });

  it("refuses another process at once while the holder lives, and not after it was SIGKILLed", async () => {
    const script = `
      import { openSqliteJournal } from ${JSON.stringify(BUILT)};
      const clock = { now: () => Date.now(), setTimer: () => ({ cancel() {} }), sleep: async () => {} };
      // Held by a live reference, as the daemon holds its journal: an unreferenced journal is closed by
      // the garbage collector (better-sqlite3 closes a collected connection), and its lock with it. The
      // collection is forced here so that this holds on a loaded machine too.
      globalThis.held = openSqliteJournal({ path: ${JSON.stringify(path)}, unitId: "vm-1", clock });
      globalThis.gc();
      process.stdout.write("open\\n");
      setInterval(() => {}, 1000);
    `;
    const holder = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
      stdio: "pipe",
    });
    children.push(holder);
    await new Promise<void>((ok, fail) => {
      holder.stdout.once("data", () => ok());
      holder.once("exit", () => fail(new Error("holder exited")));
    });
    const started = Date.now();
    const err = refusal(() => openJournal());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err.code).toBe("locked");
    expect(err.message).toContain(`in use by vendd (PID ${holder.pid}, since `);
    const gone = new Promise((r) => holder.once("exit", r));
    holder.kill("SIGKILL");
    await gone;
    // The lock file and the dead holder's owner record are still there; neither blocks.
    expect(existsSync(`${path}.lock`)).toBe(true);
    expect(readOwner(path)?.pid).toBe(holder.pid);
    expect(() => openJournal()).not.toThrow();
    expect(readOwner(path)?.pid).toBe(process.pid);
  });

  it("lets readers in while the writer holds the lock (vendd journal, doctor)", () => {
    const j = openJournal();
    j.nextOrderId();
    const db = new Database(path, { readonly: true, fileMustExist: true });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'order_seq'").pluck().get()).toBe("1");
    db.close();
  });
});

describe("start check: a journal that cannot be used is refused untouched", () => {
  it("corrupted pages", () => {
    const j = openJournal();
    j.atomically(() => {
      for (let i = 0; i < 300; i++) {
        const orderId = j.nextOrderId();
        j.openSession({ id: `s${i}`, orderId, flow: "selection", item: 1, price: 100, driver: "sim" });
      }
    });
    closeAll();
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(3 * 4096, 0x5a), 0, 3 * 4096, 4 * 4096);
    closeSync(fd);
    const before = snapshot();
    const err = refusal(() => openJournal());
    expect(err).toMatchObject({ code: "unusable", path, cause: "corrupt" });
    expect(err.nextStep).toContain('"Recovering a unit"');
    expect(err.message).toContain(path);
    expect(snapshot()).toBe(before);
  });

  it("a file that is not a database", () => {
    writeFileSync(path, Buffer.alloc(8192, 0x41));
    const before = snapshot();
    // Issue 32: no SQLite header: another file given by mistake, or a journal whose header was destroyed.
    expect(refusal(() => openJournal())).toMatchObject({ code: "unusable", cause: "not a journal" });
    expect(snapshot()).toBe(before);
  });

  it("a schema newer than this vendd", () => {
    journalWith(1);
    const raw = new Database(path);
    raw.pragma("user_version = 99");
    raw.close();
    const before = snapshot();
    const err = refusal(() => openJournal());
    expect(err).toMatchObject({ code: "unusable", cause: "schema newer" });
    expect(err.message).toMatch(/schema 99 is newer/);
    expect(snapshot()).toBe(before);
  });

  it("a full disk, before the first write", () => {
    journalWith(2);
    const before = snapshot();
    const err = refusal(() => openJournal(new ManualClock(), () => 4096));
    expect(err).toMatchObject({ code: "unusable", cause: "disk full" });
    expect(err.message).toContain(`4096 bytes free at ${dir}`);
    expect(snapshot()).toBe(before);
  });

  it("a path under a regular file, a missing directory, a directory as the path", () => {
    writeFileSync(join(dir, "plain"), "x");
    path = join(dir, "plain", "journal.db");
    expect(refusal(() => openJournal())).toMatchObject({ cause: "not a directory" });
    path = join(dir, "missing", "journal.db");
    expect(refusal(() => openJournal())).toMatchObject({ cause: "no directory" });
    expect(existsSync(join(dir, "missing"))).toBe(false);
    path = join(dir, "adir");
    mkdirSync(path);
    expect(refusal(() => openJournal())).toMatchObject({ cause: "not a file" });
  });
});

describe("data lost: the owner sidecar's high-water mark", () => {
  it("refuses an empty journal where one existed (WAL truncated after a crash)", () => {
    child(3, "kill");
    expect(readOwner(path)?.journalId).toEqual(expect.any(String));
    truncateSync(`${path}-wal`, 0);
    const before = snapshot();
    const err = refusal(() => openJournal());
    expect(err).toMatchObject({ code: "unusable", cause: "data lost" });
    expect(err.message).toMatch(/missing or empty/);
    expect(snapshot()).toBe(before);
  });

  it("refuses a journal whose order sequence fell below the mark", () => {
    child(3, "close");
    child(2, "kill");
    // A restart saw the 5 ids in the WAL (the mark is raised at open), then crashed before a checkpoint.
    child(0, "kill");
    expect(readOwner(path)?.orderSeq).toBe(5);
    truncateSync(`${path}-wal`, 0);
    const err = refusal(() => openJournal());
    expect(err).toMatchObject({ cause: "data lost" });
    expect(err.message).toContain("order sequence is 3, below the 5");
  });

  it("refuses a deleted journal while its sidecar remains; starts fresh once both are moved aside", () => {
    journalWith(2);
    rmSync(path);
    expect(refusal(() => openJournal())).toMatchObject({ cause: "data lost" });
    for (const f of ["journal.db.owner", "journal.db.lock"]) rmSync(join(dir, f));
    expect(openJournal().sessions()).toEqual([]);
  });

  it("raises the mark at each TRUNCATE checkpoint", () => {
    const j = openJournal();
    for (let i = 0; i < 4; i++) j.nextOrderId();
    expect(readOwner(path)?.orderSeq).toBe(0);
    expect(j.checkpoint()).toBe(true);
    expect(readOwner(path)?.orderSeq).toBe(4);
  });

  it("ignores an unparsable sidecar (it only loses the extra protection)", () => {
    journalWith(1);
    writeFileSync(`${path}.owner`, "{not json");
    expect(() => openJournal()).not.toThrow();
    expect(readOwner(path)?.orderSeq).toBe(1);
  });
});

describe("order ids", () => {
  const FORMAT = /^vm-1-\d{10}-\d{1,8}$/;

  it("are decimal and never repeat across restarts in the same second", () => {
    const clock = new ManualClock();
    const ids = new Set<string>();
    for (let run = 0; run < 3; run++) {
      const j = openJournal(clock);
      for (let i = 0; i < 15; i++) ids.add(j.nextOrderId());
      closeAll();
    }
    expect(ids.size).toBe(45);
    for (const id of ids) expect(id).toMatch(FORMAT);
  });

  it("never repeat across a journal deleted and recreated (with its sidecars)", () => {
    const clock = new ManualClock();
    const first = openJournal(clock);
    const before = Array.from({ length: 20 }, () => first.nextOrderId());
    closeAll();
    for (const f of ["journal.db", "journal.db.owner", "journal.db.lock"])
      rmSync(join(dir, f), { force: true });
    clock.advance(1500);
    const second = openJournal(clock);
    const after = Array.from({ length: 20 }, () => second.nextOrderId());
    expect(new Set([...before, ...after]).size).toBe(40);
    expect(after[0]).toMatch(/-1$/);
  });

  it("fit the older interface's 32 characters up to a 12-character unit id and the 8-digit sequence", () => {
    journalWith(1);
    const raw = new Database(path);
    raw.prepare("UPDATE meta SET value = '99999998' WHERE key = 'order_seq'").run();
    raw.close();
    const j = openSqliteJournal({ path, unitId: "vm-123456789", clock: new ManualClock() });
    open.push(j);
    const last = j.nextOrderId();
    expect(last).toMatch(/^vm-123456789-\d{10}-99999999$/);
    expect(last).toHaveLength(32);
    expect(() => j.nextOrderId()).toThrow(/exceed 32 characters/);
  });
});

describe("review flags", () => {
  it("flag() sets review with a reason; a later decision never clears it", () => {
    const j = openJournal();
    j.openSession({
      id: "s",
      orderId: j.nextOrderId(),
      flow: "selection",
      item: 1,
      price: 100,
      driver: "sim",
    });
    j.flag("s", "conflict: decided cancel, service shows captured");
    j.decide("s", { action: "cancel", amount: 100, reason: "vend failed", review: false });
    expect(j.session("s")?.decision?.review).toBe(true);
    expect(() => j.flag("nope", "x")).toThrow(JournalError);
  });

  it("a stale owner record of a dead process does not block an open", () => {
    journalWith(1);
    const rec = readOwner(path);
    if (rec === null) throw new Error("no owner record");
    writeOwner(path, { ...rec, pid: 999_999 });
    expect(() => openJournal()).not.toThrow();
  });
});
