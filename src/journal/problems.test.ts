import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { JournalError } from "./journal.js";
import { classifyJournalError, describeRefusal } from "./problems.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-problems-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, "journal.db");
const plenty = () => 1e9;

function sqliteError(code: string, message = "msg"): Error {
  return Object.assign(new Error(message), { code });
}

describe("classifyJournalError: SQLite and file-system errors to one cause", () => {
  const table: [string, string][] = [
    ["SQLITE_CORRUPT", "corrupt"],
    ["SQLITE_CORRUPT_INDEX", "corrupt"],
    ["SQLITE_NOTADB", "corrupt"],
    ["SQLITE_FULL", "disk full"],
    ["ENOSPC", "disk full"],
    ["EDQUOT", "disk full"],
    ["SQLITE_IOERR_SHMSIZE", "disk full"],
    ["SQLITE_BUSY", "in use"],
    ["SQLITE_READONLY", "not writable"],
    ["SQLITE_READONLY_DBMOVED", "not writable"],
    ["EROFS", "not writable"],
    ["EACCES", "not writable"],
    ["ENOTDIR", "not a directory"],
    ["SQLITE_IOERR_READ", "i/o error"],
    ["SQLITE_CANTOPEN", "i/o error"],
  ];
  for (const [code, cause] of table) {
    it(`${code} → ${cause}`, () => {
      const err = classifyJournalError(sqliteError(code), path, plenty);
      expect(err).toBeInstanceOf(JournalError);
      expect(err).toMatchObject({ code: cause === "in use" ? "locked" : "unusable", path, cause });
      expect(err.nextStep?.length).toBeGreaterThan(20);
    });
  }

  it("an ambiguous code is explained by the path: full disk, missing directory, a file in the way", () => {
    expect(classifyJournalError(sqliteError("SQLITE_IOERR"), path, () => 100).cause).toBe("disk full");
    const missing = join(dir, "nope", "journal.db");
    expect(classifyJournalError(sqliteError("SQLITE_CANTOPEN"), missing, plenty).cause).toBe("no directory");
    writeFileSync(join(dir, "file"), "x");
    const under = join(dir, "file", "sub", "journal.db");
    const err = classifyJournalError(sqliteError("SQLITE_CANTOPEN"), under, plenty);
    expect(err).toMatchObject({ cause: "not a directory" });
    expect(err.problem?.detail).toContain(`${join(dir, "file")} is a file, not a directory`);
  });

  it("passes a JournalError through; describeRefusal prints path, cause and next step", () => {
    const io = new JournalError("io", "write failed");
    expect(classifyJournalError(io, path)).toBe(io);
    expect(describeRefusal(io)).toBeNull();
    const text = describeRefusal(
      classifyJournalError(sqliteError("SQLITE_CORRUPT", "malformed"), path, plenty),
    );
    expect(text?.split("\n")).toEqual([
      "the journal cannot be used; it was left untouched",
      `  journal:   ${path}`,
      "  cause:     corrupt (SQLITE_CORRUPT: malformed)",
      expect.stringMatching(/^ {2}next step: Stop vendd.*"Recovering a unit"\)\.$/),
      "",
    ]);
  });
});
