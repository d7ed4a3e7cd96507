/**
 * Unit ↔ fleet end to end, exactly once (issue 16 acceptance), on PostgreSQL: a real server in a temporary
 * directory (scripts/postgresServer.ts) shared by two real `vendd fleet serve` processes; one is SIGKILLed
 * inside a batch's ingest transaction (fleet.ingest.stored) while the units keep selling, then restarted.
 * Then every event is on the fleet once, in seq order per unit, and the fleet's sales equal the journals'.
 * The SQLite cases and the world: fleet-e2e.test.ts, test/support/fleetE2e.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { expectBuiltCli, killMidBatch } from "../support/fleetE2e.js";
import { postgresBinDir, startPostgres, type TestPostgres } from "../support/postgres.js";

expectBuiltCli();

describe.skipIf(postgresBinDir() === null)("units and real fleet servers on PostgreSQL", () => {
  let pg: TestPostgres;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-fleet-e2e-pg-"));
    pg = await startPostgres({ database: "e2e" });
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("(b) one of two fleet processes SIGKILLed inside a batch's ingest while units sell, then restarted", async () => {
    await killMidBatch(dir, pg.url, 2, 2);
  }, 60_000);
});
