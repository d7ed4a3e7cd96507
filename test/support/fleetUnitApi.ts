/**
 * The per-dialect set-up of the unit API's tests (fleet-api-*.test.ts, fleet-enrol-limit.test.ts). Called
 * inside a `describe.each(["sqlite", "postgres"])`: on PostgreSQL it starts the file's server (postgres.ts)
 * before the describe's tests and stops it after them; before each test a fresh fleet database (SQLite in
 * memory, or a new database on that server) and app, closed after it. Also the helpers those tests share.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { createFleetApp, type FleetAppOptions } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { fleetContext, type SimUnit, send, simUnit } from "./fleet.js";
import { startPostgres, type TestPostgres } from "./postgres.js";

/** The fleet's clock at the start of each test, unless the set-up is given another. */
export const T0 = Date.parse("2026-11-25T12:00:00Z");

export interface UnitApiState {
  clock: ManualClock;
  ctx: FleetContext;
  fdb: FleetDb;
  app: FastifyInstance;
}

export interface UnitApiSetUp {
  /** Prefix of the PostgreSQL databases' names (one database per test). */
  dbPrefix: string;
  /** The clock's start; default T0. */
  now?: number;
  app?: FleetAppOptions;
}

/**
 * Registers the hooks; `bind` is handed each test's fresh state (for the test file's own variables). The
 * helpers returned work on the current test's state.
 */
export function unitApiOn(
  dialect: "sqlite" | "postgres",
  setUp: UnitApiSetUp,
  bind: (state: UnitApiState) => void,
) {
  let pgServer: TestPostgres | null = null;
  let dbCount = 0;
  let state: UnitApiState | null = null;
  const current = (): UnitApiState => {
    if (state === null) throw new Error("the unit API is not set up (outside a test?)");
    return state;
  };

  beforeAll(async () => {
    if (dialect === "postgres") pgServer = await startPostgres();
  }, 60_000);

  afterAll(async () => {
    await pgServer?.stop();
  }, 30_000);

  beforeEach(async () => {
    const clock = new ManualClock(setUp.now ?? T0);
    const target =
      dialect === "sqlite"
        ? ":memory:"
        : await (pgServer as TestPostgres).createDatabase(`${setUp.dbPrefix}_${++dbCount}`);
    const { ctx, fdb } = await fleetContext(target, clock, "Europe/Oslo");
    const app = await createFleetApp(ctx, setUp.app);
    await app.ready();
    state = { clock, ctx, fdb, app };
    bind(state);
  });

  afterEach(async () => {
    const { app, fdb } = current();
    state = null;
    await app.close();
    await fdb.close();
  });

  const post = (u: SimUnit, path: string, body: unknown, at = current().clock.now()) =>
    send(current().app, u.key, "POST", path, body, at);

  async function approved(id: string, label = "site"): Promise<SimUnit> {
    const u = simUnit(id);
    expect((await post(u, "/enroll", { unitId: id, label })).status).toBe(202);
    expect(await approveUnit(current().ctx, id, "manager")).toBe("done");
    return u;
  }

  const storedSeqs = async (unitId: string) =>
    (
      await current()
        .ctx.db.selectFrom("events")
        .select("seq")
        .where("unit_id", "=", unitId)
        .orderBy("seq")
        .execute()
    ).map((r) => r.seq);
  const committed = async (unitId: string) =>
    (
      await current()
        .ctx.db.selectFrom("units")
        .select("committed_seq")
        .where("id", "=", unitId)
        .executeTakeFirstOrThrow()
    ).committed_seq;

  return { post, approved, storedSeqs, committed };
}

/** A unit's heartbeat at T0: in service, 12 events in its backlog, one unresolved session. */
export function heartbeat(unitId: string) {
  return {
    unitId,
    at: T0,
    state: "inService",
    reason: "",
    versions: { vendd: "0.9.0", config: "7", release: "1.4.0" },
    backlog: { events: 12, oldestAt: T0 - 3_600_000, lastSeq: 16 },
    journal: { ok: true, detail: "" },
    vmc: "up" as const,
    payment: "up" as const,
    unresolved: 1,
  };
}
