import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setUpConnection } from "./sqliteSetup.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-journal-setup-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("journal connection set-up: memory", () => {
  it("bounds SQLite's page cache at 2 MiB (better-sqlite3 builds SQLite with 16 MB) and maps nothing", () => {
    const db = new Database(join(dir, "j.db"));
    try {
      setUpConnection(db, { memory: false, now: 0 });
      expect(db.pragma("cache_size", { simple: true })).toBe(-2048);
      expect(db.pragma("mmap_size", { simple: true })).toBe(0);
      // Durability is untouched by the memory settings.
      expect(db.pragma("synchronous", { simple: true })).toBe(2);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      db.close();
    }
  });
});
