/**
 * The unit API's per-request statements (src/fleet/db/hot.ts) and the heartbeat's copy of the bundle list
 * (bundles.ts `bundleIndex`), on SQLite and on a real PostgreSQL that the file starts: PostgreSQL's single
 * claim statement decides exactly what the two Kysely statements decide, and a second fleet process on the
 * same database sees an upload within BUNDLE_LIST_TTL_MS while the uploading one sees it at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import { BUNDLE_LIST_TTL_MS, storeBundle } from "../src/fleet/bundles.js";
import type { FleetContext } from "../src/fleet/context.js";
import type { FleetDb } from "../src/fleet/db/open.js";
import { createFleetApp } from "../src/fleet/server.js";
import { approveUnit } from "../src/fleet/units.js";
import { createBundle } from "../src/update/bundle.js";
import { parsePublicKey } from "../src/update/minisign.js";
import { makeKey, signWith, type TestKey } from "../src/update/test-support.js";
import { fleetContext, type SimUnit, send, simUnit } from "./support/fleet.js";
import { startPostgres, type TestPostgres } from "./support/postgres.js";

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

  beforeAll(async () => {
    if (dialect === "postgres" && pgServer === null) pgServer = await startPostgres();
  }, 60_000);

  beforeEach(async () => {
    clock = new ManualClock(T0);
    const target =
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
