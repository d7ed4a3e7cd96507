import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { vendd } from "../support/cli.js";

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("vendd console verify-audit", () => {
  it("reports an intact chain, then the row a sqlite edit changed (exit 1)", async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-audit-"));
    const path = join(dir, "journal.db");
    const journal = openSqliteJournal({ path, unitId: "vm-1", clock: new ManualClock() });
    const store = journal.console();
    store.audit("PIN", "login", "ok");
    store.audit("PIN", "service out Restocking", "ok");
    store.audit("PIN", "logout", "ok");
    journal.close();
    const ok = await vendd(["console", "verify-audit", "--journal", path]);
    expect(ok).toMatchObject({ code: 0, stdout: "audit log intact: 3 rows, chain intact\n" });
    const raw = new Database(path);
    raw.exec("DROP TRIGGER console_audit_no_update");
    raw.prepare("UPDATE console_audit SET command = 'service in' WHERE id = 2").run();
    raw.close();
    const broken = await vendd(["console", "verify-audit", "--journal", path]);
    expect(broken).toMatchObject({
      code: 1,
      stdout: "audit log BROKEN: row 2 was changed after it was written\n",
    });
    const usage = await vendd(["console", "verify-audit", "--socket", "/x"]);
    expect(usage.code).toBe(2);
  });

  it("reports rows deleted from the end of the log, even once a later row is written (exit 1)", async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-audit-"));
    const path = join(dir, "journal.db");
    let journal = openSqliteJournal({ path, unitId: "vm-1", clock: new ManualClock() });
    for (const command of ["login", "service out Restocking", "logout"])
      journal.console().audit("PIN", command, "ok");
    journal.close();
    const raw = new Database(path);
    raw.exec("DROP TRIGGER console_audit_no_delete");
    raw.prepare("DELETE FROM console_audit WHERE id >= 2").run();
    raw.close();
    const broken = await vendd(["console", "verify-audit", "--journal", path]);
    expect(broken).toMatchObject({
      code: 1,
      stdout: "audit log BROKEN: 2 row(s) missing from the end: the head records 3, the log holds 1\n",
    });
    // The daemon writes on: the truncation stays visible.
    journal = openSqliteJournal({ path, unitId: "vm-1", clock: new ManualClock() });
    journal.console().audit("PIN", "login", "ok");
    expect(journal.console().verifyAudit()).toMatchObject({ ok: false });
    journal.close();
    const later = await vendd(["console", "verify-audit", "--journal", path]);
    expect(later.code).toBe(1);
    expect(later.stdout).toContain("2 row(s) missing from the end: the head records 4, the log holds 2");
    // Nor can the head be removed quietly: without it the log is reported broken.
    const raw2 = new Database(path);
    raw2.exec("DROP TRIGGER meta_audit_head_kept");
    raw2.prepare("DELETE FROM meta WHERE key = 'audit_head'").run();
    raw2.close();
    const headless = await vendd(["console", "verify-audit", "--journal", path]);
    expect(headless).toMatchObject({
      code: 1,
      stdout: "audit log BROKEN: the audit head record (meta audit_head) is gone\n",
    });
  });
});
