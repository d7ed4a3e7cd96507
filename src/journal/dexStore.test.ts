/**
 * The DEX reads' migration and store (issue 36): a journal at the schema before it keeps every outbox row,
 * seq and delivered flag through the outbox rebuild, and the outbox then takes the kind 'dex'.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { MIGRATIONS } from "./migrations.js";
import { openSqliteJournal } from "./sqlite.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-dexstore-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const DEX_MIGRATION = MIGRATIONS.findIndex((m) => m.includes("CREATE TABLE dex_reads"));

describe("journal: DEX reads", () => {
  it("rebuilds the outbox for the 'dex' kind, keeping every row, seq and delivered flag", () => {
    expect(DEX_MIGRATION).toBeGreaterThan(4);
    const path = join(dir, "j.db");
    const raw = new Database(path);
    for (const m of MIGRATIONS.slice(0, DEX_MIGRATION)) raw.exec(m);
    raw.pragma(`user_version = ${DEX_MIGRATION}`);
    const ins = raw.prepare("INSERT INTO outbox (seq, at, kind, data, delivered) VALUES (?, ?, ?, ?, ?)");
    ins.run(1, 10, "session", '{"a":1}', 1);
    ins.run(2, 20, "fault", '{"b":2}', 0);
    ins.run(7, 30, "dropped", "{}", 0);
    expect(() => ins.run(8, 40, "dex", "{}", 0)).toThrow(/CHECK constraint/);
    raw.close();

    const j = openSqliteJournal({ path, unitId: "vm-d", clock: new ManualClock() });
    j.close();
    const after = new Database(path);
    expect(Number(after.pragma("user_version", { simple: true }))).toBe(MIGRATIONS.length);
    expect(after.prepare("SELECT seq, at, kind, data, delivered FROM outbox ORDER BY seq").all()).toEqual([
      { seq: 1, at: 10, kind: "session", data: '{"a":1}', delivered: 1 },
      { seq: 2, at: 20, kind: "fault", data: '{"b":2}', delivered: 0 },
      { seq: 7, at: 30, kind: "dropped", data: "{}", delivered: 0 },
    ]);
    const add = after.prepare("INSERT INTO outbox (seq, at, kind, data, delivered) VALUES (?, ?, ?, ?, 0)");
    add.run(8, 40, "dex", "{}");
    expect(() => add.run(9, 50, "bogus", "{}")).toThrow(/CHECK constraint/);
    const plan = after
      .prepare("EXPLAIN QUERY PLAN SELECT seq FROM outbox WHERE delivered = 0 ORDER BY seq")
      .all();
    expect(JSON.stringify(plan)).toContain("outbox_pending");
    after.close();
  });

  it("records reads once per read id and returns the last, and the last successful one", () => {
    const j = openSqliteJournal({ path: ":memory:", unitId: "vm-d", clock: new ManualClock() });
    const store = j.dex();
    const ok = {
      readId: "r1",
      at: 1000,
      trigger: "schedule" as const,
      outcome: "ok" as const,
      role: "master" as const,
      attempts: 1,
      raw: "DXS*...\r\n",
      counters: { cashless: { count: 2, value: 420 } },
      g85: "ok",
      warnings: 0,
      error: null,
    };
    expect(store.record(ok)).toBe(true);
    expect(store.record({ ...ok, at: 5 })).toBe(false);
    store.record({
      ...ok,
      readId: "r2",
      at: 2000,
      outcome: "failed",
      raw: null,
      counters: null,
      error: "silent",
    });
    expect(store.count()).toBe(2);
    expect(store.last()?.readId).toBe("r2");
    expect(store.lastOk()).toMatchObject({
      readId: "r1",
      at: 1000,
      counters: '{"cashless":{"count":2,"value":420}}',
    });
    j.close();
  });
});
