/**
 * Issue 30: a session knows its currency. Journal migration 7 adds `sessions.currency`; a journal from before
 * it gets the unit's configured currency for its old sessions when the daemon opens it; new sessions store
 * the currency they were sold in; the outbox event and `journal export` carry it, and the journal names its
 * unit and currency to a reader without the config.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { journalSale } from "../../test/support/journalSales.js";
import { ManualClock } from "../core/clock.js";
import { exportSessions, journalIdentity } from "./export.js";
import { MIGRATIONS } from "./migrations.js";
import { openSqliteJournal } from "./sqlite.js";

describe("a session's currency (journal migration 7)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("a journal from before migration 7 gives its sessions the configured currency; new ones keep theirs", () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-journal-currency-"));
    dirs.push(dir);
    const path = join(dir, "journal.db");
    // A journal as vendd left it before issue 30: six migrations, a finished session.
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 6)) old.exec(sql);
    old.pragma("user_version = 6");
    old
      .prepare(
        "INSERT INTO sessions (id, order_id, flow, item, price, driver, opened_at, result, closed_at) VALUES ('old', 'vm9-1764000000-1', 'selection', 1, 500, 'v10', 1000, 'cancelled', 2000)",
      )
      .run();
    old.close();
    expect(journalIdentity(path)).toEqual({ unitId: "vm9", currency: null });
    expect(exportSessions(path, {}).skipped).toEqual([
      { orderId: "vm9-1764000000-1", why: "currency unknown (give --config FILE)" },
    ]);

    const clock = new ManualClock(Date.parse("2026-11-24T09:00:00Z"));
    const j = openSqliteJournal({ path, unitId: "vm9", clock, currency: "EUR", outbox: { currency: "EUR" } });
    try {
      journalSale(j, { id: "new", item: 2, price: 700, driver: "v10" });
      const event = j.outboxPending(10).find((e) => e.kind === "session");
      expect(event?.data).toMatchObject({ sessionId: "new", currency: "EUR" });
    } finally {
      j.close();
    }
    // A later config in NOK: old sessions keep what they were sold in, new ones are NOK.
    const k = openSqliteJournal({ path, unitId: "vm9", clock, currency: "NOK" });
    try {
      journalSale(k, { id: "newer", item: 3, price: 900, driver: "v10" });
    } finally {
      k.close();
    }
    expect(journalIdentity(path)).toEqual({ unitId: "vm9", currency: "NOK" });
    const r = exportSessions(path, {});
    expect(r.skipped).toEqual([]);
    expect(r.sessions.map((s) => [s.sessionId, s.currency])).toEqual([
      ["old", "EUR"],
      ["new", "EUR"],
      ["newer", "NOK"],
    ]);
  });
});
