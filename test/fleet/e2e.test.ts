/**
 * Unit ↔ fleet end to end, exactly once (issue 16 acceptance), against a real `vendd fleet serve` process
 * (the built CLI) on SQLite: units are real journals with their outbox and the real signed sender (FleetLink
 * over HTTP); sales are written through the journal's own API (the engine's write path: start, vend, capture,
 * close; every seventh sale refunded in part after it closed, which reports the session again).
 *  (a) a unit's sender process SIGKILLed at each sending step (fleet.beforePost/beforeMark/afterMark), then
 *      restarted;
 *  (b) the fleet process SIGKILLed inside a batch's ingest transaction (fleet.ingest.stored) while the units
 *      keep selling, then restarted (on PostgreSQL: fleet-e2e-pg.test.ts);
 *  (c) the fleet stopped for a while as units sell, then back.
 * Then: every event is on the fleet once, in seq order per unit, the fleet's committed seq is the journal's
 * last, and the fleet's sales (captured − refunded per unit) equal the journal's done intents.
 * Bounded: seeded prices, a few hundred events, short real waits (processes are real). The world:
 * test/support/fleetE2e.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/postgresServer.js";
import { systemClock } from "../../src/core/clock.js";
import { FLEET_FAULT_POINTS } from "../../src/core/faults.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { seededRandom } from "../../src/core/random.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";
import {
  enrol,
  expectBuiltCli,
  type FleetProc,
  killMidBatch,
  sell,
  selling,
  startFleet,
  stopFleet,
  Unit,
  verify,
} from "../support/fleetE2e.js";
import { runSenderProcess } from "../support/senderProcess.js";

expectBuiltCli();

describe("units and a real fleet server on SQLite", () => {
  let dir: string;
  let db: string;
  let port: number;
  let fleet: FleetProc;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-fleet-e2e-"));
    db = join(dir, "fleet.db");
    port = await freePort();
    fleet = await startFleet(db, port);
  }, 30_000);
  afterAll(async () => {
    if (fleet !== undefined) await stopFleet(fleet);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The sender alone in its own process over a journal file, until the backlog is empty or it is killed. */
  function senderProcess(path: string, unitId: string, keyFile: string, point: string | null) {
    return runSenderProcess({
      journal: path,
      unitId,
      keyFile,
      fleetUrl: fleet.url,
      currency: "NOK",
      batchEvents: 5,
      faultPoint: point,
    });
  }

  it.each(FLEET_FAULT_POINTS.map((p) => [p]))(
    "(a) the unit SIGKILLed at %s and restarted: every event once, in order, sales equal",
    async (point) => {
      const unitId = `a-${point.replace("fleet.", "")}`;
      const path = join(dir, `${unitId}.db`);
      const key = generateUnitKey();
      const keyFile = join(dir, `${unitId}.key`);
      writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
      await enrol(fleet.url, db, unitId, key);
      // The journal is only open here while no sender process holds it.
      const open = () => openSqliteJournal({ path, unitId, clock: systemClock, outbox: { currency: "NOK" } });
      const expected: string[] = [];
      const random = seededRandom(point.length);
      const sellSome = (from: number, count: number) => {
        const j = open();
        for (let n = from; n < from + count; n++) {
          sell(j, `${unitId}-s${n}`, 50 + Math.floor(random() * 450), n % 7 === 0);
          expected.push(`${unitId}-s${n}`);
          if (n % 7 === 0) expected.push(`${unitId}-s${n}`);
        }
        j.close();
      };
      sellSome(1, 20);
      expect(await senderProcess(path, unitId, keyFile, `${point}@2`)).toBe("SIGKILL");
      sellSome(21, 6);
      expect(await senderProcess(path, unitId, keyFile, null)).toBe(0);
      const j = open();
      try {
        await verify(db, [{ id: unitId, journal: j, expected }]);
      } finally {
        j.close();
      }
    },
    30_000,
  );

  it("(c) the fleet stopped while units sell, then back: every event once, in order, sales equal", async () => {
    const units = [1, 2, 3].map((n) => new Unit(`down-${n}`, dir, 100 + n));
    try {
      for (const u of units) {
        await enrol(fleet.url, db, u.id, u.key);
        u.start(fleet.url);
      }
      await selling(units, 10);
      expect(await stopFleet(fleet)).toBe(0);
      await selling(units, 30, 20); // about a second with the fleet down
      for (const u of units) expect(u.journal.outboxStats().events).toBeGreaterThan(0);
      fleet = await startFleet(db, port);
      await selling(units, 5);
      for (const u of units) await u.drained();
      await verify(db, units);
    } finally {
      for (const u of units) await u.stop();
    }
  }, 40_000);

  it("(b) the fleet SIGKILLed inside a batch's ingest while units sell, then restarted", async () => {
    await killMidBatch(dir, join(dir, "kill.db"), 1, 1);
  }, 40_000);
});
