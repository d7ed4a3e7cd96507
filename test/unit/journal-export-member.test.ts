/**
 * Issue 31, defect 3: `vendd journal export` names a plan vend's member exactly as the outbox's `session`
 * event to the fleet does (member and plan ids; never the badge, neither its UID nor its hash), and a paid
 * session carries none.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { SessionData } from "../../src/core/fleetWire.js";
import { PLAN_DRIVER } from "../../src/journal/journal.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import { vendd } from "../support/cli.js";
import { journalSale } from "../support/journalSales.js";

const BADGE_HASH = "h".repeat(43);

describe("vendd journal export: the member of a plan vend", () => {
  let dir: string;
  let path: string;
  let outboxMember: unknown;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "vendd-export-member-"));
    path = join(dir, "journal.db");
    const clock = new ManualClock(Date.parse("2026-11-24T09:00:00Z"));
    const j = openSqliteJournal({ path, unitId: "vm5", clock, outbox: { currency: "DKK" } });
    try {
      const orderId = j.nextOrderId();
      j.atomically(() => {
        j.openSession({
          id: "p1",
          orderId,
          flow: "selection",
          item: 12,
          price: 150,
          driver: PLAN_DRIVER,
          member: {
            memberId: "m-1",
            planId: "coffee-20",
            badge: BADGE_HASH,
            day: "2026-11-24",
            month: "2026-11",
          },
        });
        j.approveVend("p1", 12, 150);
      });
      clock.advance(5000);
      j.atomically(() => {
        j.recordVend("p1", "success");
        j.closeSession("p1", "captured", "plan vend delivered");
      });
      clock.advance(60_000);
      journalSale(j, {
        id: "s1",
        item: 3,
        price: 1000,
        captured: 1000,
        driver: "legacy",
        paymentId: "order",
        startDetail: "",
        captureDetail: "",
        reason: "vend delivered",
      });
      const events = j.outboxPending(100).filter((e) => e.kind === "session");
      const plan = events.map((e) => SessionData.parse(e.data)).find((s) => s.sessionId === "p1");
      outboxMember = plan?.member;
    } finally {
      j.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("carries the same member reference as the outbox event, and none for a paid sale", async () => {
    expect(outboxMember).toEqual({ memberId: "m-1", planId: "coffee-20" });
    const r = await vendd(["journal", "export", "--journal", path], { env: { TZ: "UTC" } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(BADGE_HASH);
    const rows = r.stdout
      .trim()
      .split("\n")
      .map((l) => SessionData.parse(JSON.parse(l)));
    expect(rows.find((s) => s.sessionId === "p1")?.member).toEqual(outboxMember);
    expect(rows.find((s) => s.sessionId === "s1")?.member ?? null).toBeNull();
  });
});
