/**
 * Issue 43: times name their zone (`vendd journal`, the console's tables, the dashboard), through the one
 * formatter of src/core/days.ts, and a bundle made `--expires 2027-03-31` shows that day wherever it is
 * read, also in a zone ahead of UTC (Pacific/Kiritimati, UTC+14, where the end of that day UTC is already
 * the next day). The CLI runs as a process with TZ set; the pages are rendered as the server renders them.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { render } from "../../src/console/render.js";
import { ManualClock } from "../../src/core/clock.js";
import { bundlesPage } from "../../src/fleet/bundles/views.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { vendd } from "../support/cli.js";
import { journalSale } from "../support/journalSales.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-times-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AHEAD = "Pacific/Kiritimati";

describe("times name their zone; a bundle's expiry day stays that day", () => {
  it("bundle create --expires 2027-03-31 says 2027-03-31 in a zone ahead of UTC", async () => {
    const raw = rawV10();
    raw.updates = { fleet: "fleet-a", stateDir: join(dir, "state"), releaseRoot: join(dir, "opt") };
    const config = join(dir, "next.yaml");
    writeFileSync(config, JSON.stringify(raw));
    const out = join(dir, "b.vbundle");
    const r = await vendd(
      [
        "bundle",
        "create",
        "--config",
        config,
        "--version",
        "3",
        "--targets",
        "fleet-a",
        "--expires",
        "2027-03-31",
        "--out",
        out,
      ],
      { env: { TZ: AHEAD } },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("version 3, expires 2027-03-31 (end of day, UTC)");
    expect(r.stdout + r.stderr).not.toContain("2027-04-01");
    expect(r.stdout + r.stderr).not.toContain("2027-03-30");
  });

  it("vendd journal names the zone of its times", async () => {
    const path = join(dir, "journal.db");
    const j = openSqliteJournal({
      path,
      unitId: "vm-t",
      clock: new ManualClock(Date.parse("2026-11-24T09:00:00Z")),
      outbox: { currency: "DKK" },
    });
    try {
      journalSale(j, { id: "s1", item: 3, price: 1000, driver: "legacy" });
    } finally {
      j.close();
    }
    const r = await vendd(["journal", "--journal", path], { env: { TZ: "Asia/Kolkata" } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("2026-11-24 14:30 UTC+5:30");
    const utc = await vendd(["journal", "--journal", path], { env: { TZ: "UTC" } });
    expect(utc.stdout).toContain("2026-11-24 09:00 UTC");
  });

  it("the dashboard's bundle list names the fleet's zone and shows the expiry day as given", () => {
    const page = bundlesPage(
      {
        session: { id: "s", userId: 1, username: "ann", role: "manager", csrf: "c" },
        timeZone: AHEAD,
        now: Date.parse("2026-12-02T12:00:00Z"),
      },
      [
        {
          id: "0123456789abcdef",
          kind: "config",
          version: "3",
          targets: ["fleet-a"],
          expiresAt: Date.parse("2027-03-31T23:59:59Z"),
          sha256: "0".repeat(64),
          size: 100,
          uploadedBy: "ann",
          uploadedAt: Date.parse("2026-12-02T12:00:00Z"),
          verified: true,
          counts: { pending: 0, applied: 0, rolledBack: 0 },
          rollouts: [],
        },
      ],
    );
    expect(page).toContain("expires 2027-03-31 (end of day, UTC)");
    expect(page).not.toContain("2027-04-01");
    expect(page).toContain("uploaded by ann at 2026-12-03 02:00:00 UTC+14");
  });

  it("the console's tables name the unit's zone", () => {
    const at = Date.parse("2026-11-24T09:00:00Z");
    const journal = render("journal", {
      view: "recent",
      sessions: [{ at, orderId: "vm-t-1", item: 3, price: "10.00", result: "captured" }],
    });
    expect(journal.split("\n")[0]).toMatch(/^TIME UTC\S*\s+ORDER/);
    const status = render("status", { lastVends: [], fleet: { state: "ok", oldestAt: at, lastAckAt: at } });
    expect(status).toMatch(/last vends \(times UTC\S*\):/);
    expect(status).toMatch(/oldest 2026-11-2\d \d\d:\d\d UTC/);
    expect(render("sales", { items: [], from: "2026-11-24", to: "2026-11-24" })).toMatch(
      /no sales 2026-11-24\.\.2026-11-24 \(days in UTC\S*\)/,
    );
  });
});
