/**
 * The unit API's per-request statements (src/fleet/db/unitStatements.ts, unitStatementsPostgres.ts, unitStatementsSqlite.ts) and the heartbeat's copy of the bundle list
 * (bundles/store.ts `bundleIndex`), on SQLite and on a real PostgreSQL that the file starts: PostgreSQL's single
 * claim statement decides exactly what the two Kysely statements decide, and a second fleet process on the
 * same database sees an upload within BUNDLE_LIST_TTL_MS while the uploading one sees it at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { BUNDLE_LIST_TTL_MS, storeBundle } from "../../src/fleet/bundles/store.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import {
  HEARTBEATS_IN_FLIGHT,
  postgresHotPath,
  rolledBack,
} from "../../src/fleet/db/unitStatementsPostgres.js";
import { createFleetApp } from "../../src/fleet/server.js";
import { approveUnit } from "../../src/fleet/units/index.js";
import { createBundle } from "../../src/update/bundle.js";
import { parsePublicKey } from "../../src/update/minisign.js";
import { makeKey, signWith, type TestKey } from "../../src/update/update.test-support.js";
import { fleetContext, type SimUnit, send, simUnit } from "../support/fleet.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";

const T0 = Date.parse("2026-11-27T12:00:00Z");

let pgServer: TestPostgres | null = null;
let dbCount = 0;
let signer: TestKey;
let dir: string;

beforeAll(async () => {
  signer = await makeKey("fleet-hot");
  dir = mkdtempSync(join(tmpdir(), "vendd-fleet-hot-"));
}, 30_000);

afterAll(async () => {
  await pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe.each(["sqlite", "postgres"] as const)("unit API hot path on %s", (dialect) => {
  let clock: ManualClock;
  /** Two fleet processes' worth of context and app on one database. */
  let a: { ctx: FleetContext; fdb: FleetDb; app: FastifyInstance };
  let b: { ctx: FleetContext; fdb: FleetDb; app: FastifyInstance };
  /** The database of the test: a file or a PostgreSQL URL. */
  let target: string;

  beforeAll(async () => {
    if (dialect === "postgres" && pgServer === null) pgServer = await startPostgres();
  }, 60_000);

  beforeEach(async () => {
    clock = new ManualClock(T0);
    target =
      dialect === "sqlite"
        ? join(dir, `fleet-${++dbCount}.db`)
        : await (pgServer as TestPostgres).createDatabase(`hot_${++dbCount}`);
    const open = async () => {
      const { ctx, fdb } = await fleetContext(target, clock);
      const app = await createFleetApp(ctx);
      await app.ready();
      return { ctx, fdb, app };
    };
    a = await open();
    b = await open();
  });

  afterEach(async () => {
    for (const p of [a, b]) {
      await p.app.close();
      await p.fdb.close();
    }
  });

  const nonces = async (publicKey: string) =>
    (await a.ctx.db.selectFrom("nonces").select("nonce").where("public_key", "=", publicKey).execute()).map(
      (r) => r.nonce,
    );

  it("claimNonce: a stranger writes nothing, an enrolment and a known key record the nonce once", async () => {
    const hot = a.fdb.hot;
    const u = simUnit("vm-0001");
    expect(await hot.claimNonce(u.key.publicKey, "n-1", T0 + 1000, false)).toEqual({
      unit: null,
      fresh: false,
    });
    expect(await nonces(u.key.publicKey)).toEqual([]);
    expect(await hot.claimNonce(u.key.publicKey, "n-2", T0 + 1000, true)).toEqual({
      unit: null,
      fresh: true,
    });
    expect(await hot.claimNonce(u.key.publicKey, "n-2", T0 + 1000, true)).toEqual({
      unit: null,
      fresh: false,
    });
    await a.ctx.db
      .insertInto("units")
      .values({
        id: u.id,
        public_key: u.key.publicKey,
        fingerprint: "fp",
        label: "lobby",
        status: "revoked",
        enrolled_at: T0,
        committed_seq: 7,
        backlog_events: 0,
        unresolved: 0,
      })
      .execute();
    const unit = { id: u.id, status: "revoked", committed_seq: 7 };
    expect(await hot.claimNonce(u.key.publicKey, "n-3", T0 + 1000, false)).toEqual({ unit, fresh: true });
    // The other process's statements see the same nonce: a replay across processes is refused too.
    expect(await b.fdb.hot.claimNonce(u.key.publicKey, "n-3", T0 + 1000, false)).toEqual({
      unit,
      fresh: false,
    });
    expect((await nonces(u.key.publicKey)).sort()).toEqual(["n-2", "n-3"]);
    const expiry = await a.ctx.db
      .selectFrom("nonces")
      .select("expires_at")
      .where("nonce", "=", "n-3")
      .executeTakeFirstOrThrow();
    expect(Number(expiry.expires_at)).toBe(T0 + 1000);
  });

  it("heartbeat: writes the row and answers its committed seq; null for a unit that is not there", async () => {
    const row = {
      last_seen_at: T0,
      last_heartbeat: "{}",
      config_version: "3",
      release_version: null,
      backlog_events: 2,
      backlog_oldest_at: T0 - 60_000,
      unresolved: 1,
    };
    expect(await a.fdb.hot.heartbeat("vm-none", row)).toBeNull();
    const u = await approved("vm-0002");
    expect(await a.fdb.hot.heartbeat(u.id, row)).toBe(0);
    const stored = await a.ctx.db
      .selectFrom("units")
      .select(["last_seen_at", "config_version", "release_version", "backlog_events", "unresolved"])
      .where("id", "=", u.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({
      last_seen_at: T0,
      config_version: "3",
      release_version: null,
      backlog_events: 2,
      unresolved: 1,
    });
  });

  it("claimHeartbeat: writes only for a fresh nonce of the key's own approved unit; the nonce as claimNonce records it", async () => {
    const hot = a.fdb.hot;
    const claimHeartbeat = hot.claimHeartbeat?.bind(hot);
    if (claimHeartbeat === undefined) throw new Error(`no claimHeartbeat on ${dialect}`);
    const row = (n: number) => ({
      last_seen_at: T0 + n,
      last_heartbeat: `{"n":${n}}`,
      config_version: String(n),
      release_version: null,
      backlog_events: n,
      backlog_oldest_at: null,
      unresolved: 0,
    });
    const stored = async (id: string) =>
      (
        await a.ctx.db
          .selectFrom("units")
          .select("last_heartbeat")
          .where("id", "=", id)
          .executeTakeFirstOrThrow()
      ).last_heartbeat;
    const stray = simUnit("vm-0009");
    expect(await claimHeartbeat(stray.key.publicKey, "n-1", T0 + 1000, stray.id, row(1))).toEqual({
      unit: null,
      fresh: false,
      committed: null,
    });
    expect(await nonces(stray.key.publicKey)).toEqual([]);
    const u = await approved("vm-0004");
    const v = await approved("vm-0005");
    const unit = { id: u.id, status: "approved", committed_seq: 0 };
    expect(await claimHeartbeat(u.key.publicKey, "n-1", T0 + 1000, u.id, row(1))).toEqual({
      unit,
      fresh: true,
      committed: 0,
    });
    expect(await stored(u.id)).toBe(`{"n":1}`);
    // The same nonce again, from either process: a replay, nothing written.
    expect(await b.fdb.hot.claimHeartbeat?.(u.key.publicKey, "n-1", T0 + 1000, u.id, row(2))).toEqual({
      unit,
      fresh: false,
      committed: null,
    });
    // Another unit's id: the nonce is spent, neither row written.
    expect(await claimHeartbeat(u.key.publicKey, "n-2", T0 + 1000, v.id, row(3))).toEqual({
      unit,
      fresh: true,
      committed: null,
    });
    expect([await stored(u.id), await stored(v.id)]).toEqual([`{"n":1}`, null]);
    // A revoked unit: the claim answers its status, nothing written.
    await a.ctx.db.updateTable("units").set({ status: "revoked" }).where("id", "=", u.id).execute();
    expect(await claimHeartbeat(u.key.publicKey, "n-3", T0 + 1000, u.id, row(4))).toEqual({
      unit: { ...unit, status: "revoked" },
      fresh: true,
      committed: null,
    });
    expect(await stored(u.id)).toBe(`{"n":1}`);
    const recorded = await nonces(u.key.publicKey);
    expect(recorded).toEqual(expect.arrayContaining(["n-1", "n-2", "n-3"]));
    expect(recorded).toHaveLength(4); // and the enrolment's
  });

  it.runIf(dialect === "postgres")(
    "claimHeartbeat in a burst: the heartbeats that waited go as one statement, each answered as if alone",
    async () => {
      const pool = new pg.Pool({ connectionString: target, max: 4, options: "-c synchronous_commit=off" });
      const sizes: number[] = [];
      const hot = postgresHotPath(pool, undefined, { onHeartbeatStatement: (n) => sizes.push(n) });
      try {
        const row = (n: number, config = String(n)) => ({
          last_seen_at: T0 + n,
          last_heartbeat: `{"n":${n}}`,
          config_version: config,
          release_version: null,
          backlog_events: n,
          backlog_oldest_at: null,
          unresolved: n % 3,
        });
        const [u1, u2, u3, u4, u5, u6] = await Promise.all(
          ["vm-0011", "vm-0012", "vm-0013", "vm-0014", "vm-0015", "vm-0016"].map(approved),
        );
        if (u1 === undefined || u2 === undefined || u3 === undefined) throw new Error("units");
        if (u4 === undefined || u5 === undefined || u6 === undefined) throw new Error("units");
        await a.ctx.db.updateTable("units").set({ status: "revoked" }).where("id", "=", u4.id).execute();
        await a.ctx.db.updateTable("units").set({ committed_seq: 9 }).where("id", "=", u3.id).execute();
        expect(await a.fdb.hot.claimNonce(u5.key.publicKey, "spent", T0 + 1000, false)).toMatchObject({
          fresh: true,
        });
        const stranger = simUnit("vm-0019");
        const unit = (u: SimUnit, status = "approved", committed_seq = 0) => ({
          id: u.id,
          status,
          committed_seq,
        });
        // The first HEARTBEATS_IN_FLIGHT go alone; the rest wait for one of them and then go together.
        const cases: [SimUnit, string, string, ReturnType<typeof row>, unknown][] = [
          [u1, "a", u1.id, row(1), { unit: unit(u1), fresh: true, committed: 0 }],
          [u6, "a", u6.id, row(6), { unit: unit(u6), fresh: true, committed: 0 }],
          [u2, "a", u3.id, row(2), { unit: unit(u2), fresh: true, committed: null }], // another unit's id
          [u3, "a", u3.id, row(3), { unit: unit(u3, "approved", 9), fresh: true, committed: 9 }],
          [stranger, "a", stranger.id, row(4), { unit: null, fresh: false, committed: null }],
          [u4, "a", u4.id, row(5), { unit: unit(u4, "revoked"), fresh: true, committed: null }],
          [u5, "spent", u5.id, row(7), { unit: unit(u5), fresh: false, committed: null }], // a replay
          [u1, "b", u1.id, row(8), { unit: unit(u1), fresh: true, committed: 0 }], // same key: a later statement
          [u1, "a", u1.id, row(9), { unit: unit(u1), fresh: false, committed: null }], // replay of the first
          [u5, "c", u5.id, row(10), { unit: unit(u5), fresh: true, committed: 0 }],
        ];
        const answers = await Promise.all(
          cases.map(([u, nonce, id, r]) => hot.claimHeartbeat?.(u.key.publicKey, nonce, T0 + 1000, id, r)),
        );
        expect(answers).toEqual(cases.map((c) => c[4]));
        expect(sizes.slice(0, HEARTBEATS_IN_FLIGHT)).toEqual(Array(HEARTBEATS_IN_FLIGHT).fill(1));
        expect(Math.max(...sizes)).toBeGreaterThan(1);
        expect(sizes.reduce((x, y) => x + y, 0)).toBe(cases.length);
        const rows = await a.ctx.db
          .selectFrom("units")
          .select(["id", "last_heartbeat", "config_version", "unresolved", "committed_seq"])
          .where("id", "in", [u1.id, u2.id, u3.id, u4.id, u5.id, u6.id])
          .orderBy("id")
          .execute();
        expect(rows.map((r) => [r.id, r.last_heartbeat, r.config_version, Number(r.unresolved)])).toEqual([
          [u1.id, `{"n":8}`, "8", 2],
          [u2.id, null, null, 0],
          [u3.id, `{"n":3}`, "3", 0],
          [u4.id, null, null, 0],
          [u5.id, `{"n":10}`, "10", 1],
          [u6.id, `{"n":6}`, "6", 0],
        ]);
        expect(await nonces(stranger.key.publicKey)).toEqual([]);
        expect((await nonces(u1.key.publicKey)).filter((n) => n.length === 1).sort()).toEqual(["a", "b"]);
        expect((await nonces(u4.key.publicKey)).filter((n) => n.length === 1)).toEqual(["a"]);

        // A value the database refuses (a NUL byte) fails the statement: the heartbeats in it are then
        // sent one by one, so only the bad one fails.
        sizes.length = 0;
        const burst = [u1, u2, u3, u5].map((u, i) =>
          hot
            .claimHeartbeat?.(
              u.key.publicKey,
              `d${i}`,
              T0 + 1000,
              u.id,
              row(20 + i, i === 3 ? "bad\u0000" : "ok"),
            )
            .then(
              (r) => r?.committed ?? "not written",
              (err: unknown) => `failed ${(err as { code?: string }).code}`,
            ),
        );
        expect(await Promise.all(burst)).toEqual([0, 0, 9, "failed 22021"]);
        expect(sizes).toEqual([1, 1, 2, 1, 1]);
        expect(await nonces(u5.key.publicKey)).not.toContain("d3");
      } finally {
        await pool.end();
      }
    },
  );

  async function approved(id: string): Promise<SimUnit> {
    const u = simUnit(id);
    const r = await send(a.app, u.key, "POST", "/enroll", { unitId: id, label: "site" }, clock.now());
    expect(r.status).toBe(202);
    expect(await approveUnit(a.ctx, id, "manager")).toBe("done");
    return u;
  }

  it("an upload is in the uploading process's heartbeat answers at once, in another's within the TTL", async () => {
    const u = await approved("vm-0003");
    const etag = async (app: FastifyInstance) => {
      const r = await send(
        app,
        u.key,
        "POST",
        "/heartbeat",
        {
          unitId: u.id,
          at: clock.now(),
          state: "inService",
          reason: "",
          versions: { vendd: "0.1.0", config: null, release: null },
          backlog: { events: 0, oldestAt: null, lastSeq: 0 },
          journal: { ok: true, detail: "ok" },
          vmc: "up",
          payment: "up",
          unresolved: 0,
        },
        clock.now(),
      );
      expect(r.status).toBe(200);
      return (r.json as { bundleEtag: unknown }).bundleEtag;
    };
    expect(await etag(a.app)).toBeNull();
    expect(await etag(b.app)).toBeNull(); // b now holds a copy of the (empty) list
    const { bundle } = createBundle({
      configText: "unit: {id: vm-0003}\n",
      release: null,
      version: 4,
      targets: [u.id],
      expires: "2031-01-01",
    });
    const stored = await storeBundle(a.ctx, signWith(bundle, [signer]), "ann", [
      parsePublicKey(signer.publicKeyText),
    ]);
    expect(await etag(a.app)).toBe(`"${stored.sha256}"`);
    expect(await etag(b.app)).toBeNull();
    clock.advance(BUNDLE_LIST_TTL_MS - 1);
    expect(await etag(b.app)).toBeNull();
    clock.advance(1);
    expect(await etag(b.app)).toBe(`"${stored.sha256}"`);
    // The unit's own GET /bundle never answers from the copy.
    expect((await send(b.app, u.key, "GET", "/bundle", undefined, clock.now())).status).toBe(200);
  });
});

describe("a PostgreSQL heartbeat statement that failed", () => {
  const failure = (code: string) => Object.assign(new pg.DatabaseError("failed", 0, "error"), { code });
  it("is sent again heartbeat by heartbeat only when the database rolled it back", () => {
    // Refused values, a deadlock's victim, a serialization failure: certainly rolled back.
    for (const code of ["22021", "22003", "23505", "54000", "40P01", "40001"])
      expect(rolledBack(failure(code))).toBe(true);
    // Unknown outcome (statement completion unknown, the server shutting down, the connection lost), or not
    // the database's answer at all.
    for (const code of ["40003", "57P01", "08006", "XX000"]) expect(rolledBack(failure(code))).toBe(false);
    expect(rolledBack(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(false);
    expect(rolledBack("40P01")).toBe(false);
  });
});
