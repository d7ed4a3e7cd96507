/**
 * Issue 43: sales a unit made before it had a fleet reach the fleet after it enrols, once and bounded. The
 * unit's journal file is written first without a fleet outbox (a unit selling on its own), then opened as
 * the daemon opens it once `fleet:` is configured, enrolled through the real `/enroll` of a real `vendd
 * fleet serve` process, and its real signed sender delivers: the fleet's sales hold those sessions (the
 * first reconciliation finds them), a sale older than the bound stays out, and opening the journal again
 * sends nothing twice.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/postgresServer.js";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { FleetLink } from "../../src/daemon/fleetLink.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { BACKFILL_DAYS, openSqliteJournal } from "../../src/journal/sqlite.js";
import { enrol, expectBuiltCli, startFleet, stopFleet } from "../support/fleetE2e.js";
import { journalSale } from "../support/journalSales.js";

const DAY = 86_400_000;

describe("sales made before enrolment (issue 43)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-backfill-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reach the fleet after enrolment, once, within the bound", async () => {
    expectBuiltCli();
    const unitId = "bf-1";
    const path = join(dir, "journal.db");
    const now = Date.now();
    // Selling on its own: one sale long ago (past the bound), three in the last days.
    const clock = new ManualClock(now - (BACKFILL_DAYS + 8) * DAY);
    let j = openSqliteJournal({ path, unitId, clock, currency: "NOK" });
    journalSale(j, { id: "old", item: 1, price: 900, driver: "v10" });
    clock.advance((BACKFILL_DAYS + 5) * DAY);
    const prices = [250, 400, 1250];
    prices.forEach((price, i) => {
      journalSale(j, { id: `s${i}`, item: 1, price, driver: "v10" });
      clock.advance(3_600_000);
    });
    j.close();

    const db = join(dir, "fleet.db");
    const fleet = await startFleet(db, await freePort());
    try {
      // The daemon's journal once `fleet:` is configured: with its outbox.
      j = openSqliteJournal({ path, unitId, clock: systemClock, outbox: { currency: "NOK" } });
      expect(j.outboxStats().lastSeq).toBe(3);
      const key = generateUnitKey();
      await enrol(fleet.url, db, unitId, key);
      const stop = new AbortController();
      const link = new FleetLink({
        url: fleet.url,
        unitId,
        key,
        outbox: j,
        clock: systemClock,
        random: Math.random,
        logger: pino({ level: "silent" }),
        heartbeat: () => ({
          state: "inService",
          reason: "",
          versions: { vendd: "test", config: null, release: null },
          journal: { ok: true, detail: "ok" },
          vmc: "up",
          payment: "up",
          unresolved: 0,
        }),
        heartbeatMs: 60_000,
        batchEvents: 2,
        backlogWarnEvents: 10_000,
        backlogWarnMs: DAY,
        timeoutMs: 3000,
        backoff: { baseDelayMs: 20, maxDelayMs: 200 },
        pollMs: 20,
      });
      const running = link.run(stop.signal);
      const until = Date.now() + 30_000;
      while (j.outboxStats().events > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      stop.abort(new Error("test done"));
      await running;
      expect(j.outboxStats().events).toBe(0);
      j.close();

      const fdb = await openFleetDb(db);
      try {
        const sales = await fdb.db
          .selectFrom("sales")
          .select(["session_id", "captured"])
          .where("unit_id", "=", unitId)
          .orderBy("session_id")
          .execute();
        expect(sales.map((s) => [s.session_id, Number(s.captured)])).toEqual(
          prices.map((p, i) => [`s${i}`, p]),
        );
      } finally {
        await fdb.close();
      }
      // Opened again (a restart): nothing is backfilled twice.
      j = openSqliteJournal({ path, unitId, clock: systemClock, outbox: { currency: "NOK" } });
      expect([j.outboxStats().lastSeq, j.outboxStats().events]).toEqual([3, 0]);
      j.close();
    } finally {
      await stopFleet(fleet);
    }
  }, 120_000);
});
