/**
 * Issue 32, defect 6: files holding money or secrets are created 0600 whatever the umask (the journal and
 * its -wal, -shm, lock, owner and clean-close files; the fleet's database and its -wal; key files), and the
 * fleet logs requests at debug with one summary a minute at info (before: two info lines per heartbeat).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/core/atomicFile.js";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { openSqliteJournal } from "../../src/journal/sqlite.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-modes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const before = process.umask();
afterEach(() => {
  process.umask(before);
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe("files holding money or secrets: 0600 whatever the umask", () => {
  it("the journal and every file beside it", () => {
    process.umask(0o022);
    const path = join(dir, "journal.db");
    const j = openSqliteJournal({
      path,
      unitId: "vm-modes",
      clock: systemClock,
      outbox: { currency: "DKK" },
    });
    const beside = ["", "-wal", "-shm", ".lock", ".owner"].map((s) => `${path}${s}`).filter(existsSync);
    expect(beside.length).toBeGreaterThanOrEqual(4);
    j.close();
    for (const f of [...beside, `${path}.closed`].filter(existsSync))
      expect([f, mode(f)]).toEqual([f, 0o600]);
  });

  it("the fleet's database and its -wal", async () => {
    process.umask(0o002);
    const path = join(dir, "fleet.db");
    const fdb = await openFleetDb(path);
    for (const f of [path, `${path}-wal`].filter(existsSync)) expect([f, mode(f)]).toEqual([f, 0o600]);
    await fdb.close();
  });

  it("an atomically written key gets exactly its mode, even under umask 0", () => {
    process.umask(0);
    const key = join(dir, "unit.key");
    writeFileAtomic(key, "secret", { mode: 0o600 });
    expect(mode(key)).toBe(0o600);
  });
});

describe("fleet request log", () => {
  it("no info line per request; one info summary a minute", async () => {
    const lines: { level: number; msg: string; requests?: number }[] = [];
    const logger = pino(
      { level: "info" },
      { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) },
    );
    const fdb = await openFleetDb(":memory:");
    const clock = new ManualClock();
    const ctx: FleetContext = {
      db: fdb.db,
      lightDb: fdb.light,
      hot: fdb.hot,
      dialect: fdb.dialect,
      clock,
      logger,
      timeZone: "UTC",
    };
    const app = await createFleetApp(ctx, { noncePurgeMs: 3_600_000 });
    await app.ready();
    for (let i = 0; i < 20; i++) await app.inject({ method: "GET", url: "/api/unit/v1/nowhere" });
    expect(lines.filter((l) => /request/.test(l.msg))).toEqual([]);
    clock.advance(60_000);
    await new Promise((resolve) => setImmediate(resolve));
    const summaries = lines.filter((l) => l.msg === "requests answered");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ level: 30, requests: 20, clientErrors: 20 });
    await app.close();
    await fdb.close();
  });
});
