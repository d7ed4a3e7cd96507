import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { stampPath, takeCleanClose } from "./cleanClose.js";
import { openSqliteJournal } from "./sqlite.js";

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-clean-close-"));
  path = join(dir, "journal.db");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function journalWithSessions(n: number): void {
  const j = openSqliteJournal({ path, unitId: "vm-cc", clock: new ManualClock() });
  j.atomically(() => {
    for (let i = 0; i < n; i++) {
      const orderId = j.nextOrderId();
      j.openSession({ id: `s${i}`, orderId, flow: "selection", item: 1, price: 100, driver: "sim" });
    }
  });
  j.close();
}

describe("clean-close stamp: the start check may skip quick_check only for a file untouched since a clean close", () => {
  it("is written at a clean close and taken (once) by the next start", () => {
    journalWithSessions(3);
    expect(existsSync(stampPath(path))).toBe(true);
    expect(takeCleanClose(path)).toBe(true);
    expect(existsSync(stampPath(path))).toBe(false);
    expect(takeCleanClose(path)).toBe(false);
  });

  it("does not hold after any write to the file, even of the same bytes", () => {
    journalWithSessions(3);
    const fd = openSync(path, "r+");
    const page = Buffer.alloc(4096);
    readSync(fd, page, 0, 4096, 4096);
    writeSync(fd, page, 0, 4096, 4096);
    closeSync(fd);
    expect(takeCleanClose(path)).toBe(false);
  });

  it("is not left by a journal that was not closed (a crash): its WAL holds commits", () => {
    journalWithSessions(1);
    const j = openSqliteJournal({ path, unitId: "vm-cc", clock: new ManualClock() });
    // The start consumed the stamp; this writer is never closed, as in a SIGKILL.
    expect(existsSync(stampPath(path))).toBe(false);
    j.nextOrderId();
    expect(takeCleanClose(path)).toBe(false);
  });

  it("a journal corrupted after a clean close is still refused at the next start", () => {
    journalWithSessions(300);
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(3 * 4096, 0x5a), 0, 3 * 4096, 4 * 4096);
    closeSync(fd);
    expect(() => openSqliteJournal({ path, unitId: "vm-cc", clock: new ManualClock() })).toThrow(
      expect.objectContaining({ code: "unusable" }),
    );
  });
});
