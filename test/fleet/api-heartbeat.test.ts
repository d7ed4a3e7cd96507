/**
 * The heartbeat's refusals through the unit API (issue 16), on SQLite and on a real PostgreSQL that the file
 * starts. A heartbeat claims its nonce in the statement that writes it (db/unitStatementsPostgres.ts `claimHeartbeat`; db/unitStatementsSqlite.ts), unlike
 * the other routes, whose nonce is claimed before the body is read: these tests hold it to the same answers
 * in the same order (an unknown key, a replay, a unit not approved, a malformed body, another unit's id),
 * and check that a refused heartbeat writes nothing on any unit's row.
 */
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/core/clock.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { revokeUnit } from "../../src/fleet/units/index.js";
import { signed, simUnit } from "../support/fleet.js";
import { heartbeat, unitApiOn } from "../support/fleetUnitApi.js";

describe.each(["sqlite", "postgres"] as const)("heartbeat refusals on %s", (dialect) => {
  let clock: ManualClock;
  let ctx: FleetContext;
  let app: FastifyInstance;
  const { post, approved } = unitApiOn(dialect, { dbPrefix: "hb" }, (s) => {
    ({ clock, ctx, app } = s);
  });

  const row = (id: string) =>
    ctx.db
      .selectFrom("units")
      .select(["last_seen_at", "last_heartbeat", "unresolved"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
  const nonceCount = async (publicKey: string) =>
    (await ctx.db.selectFrom("nonces").select("nonce").where("public_key", "=", publicKey).execute()).length;
  /** One signed request, to be sent more than once (a replay). */
  const once = (u: ReturnType<typeof simUnit>, body: unknown) => {
    const r = signed(u.key, "POST", "/heartbeat", body, clock.now());
    return () => app.inject({ method: "POST", url: r.url, headers: r.headers, payload: r.payload });
  };

  it("an approved unit's heartbeat is written and answered; a replay of it is refused and writes nothing", async () => {
    const u = await approved("vm-0001");
    const send = once(u, heartbeat(u.id));
    clock.advance(1000);
    const first = await send();
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ committed: 0, bundleEtag: null });
    const written = await row(u.id);
    expect(written).toMatchObject({ last_seen_at: clock.now(), unresolved: 1 });
    expect(JSON.parse(written.last_heartbeat ?? "null")).toEqual(heartbeat(u.id));
    clock.advance(1000);
    const replay = await send();
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ error: { code: "replay" } });
    expect(await row(u.id)).toEqual(written); // last_seen_at not moved by the replay
  });

  it("an unenrolled key: 401 unknown_key, no nonce recorded, also with a malformed body", async () => {
    const stray = simUnit("vm-0009");
    expect(await post(stray, "/heartbeat", heartbeat(stray.id))).toMatchObject({
      status: 401,
      json: { error: { code: "unknown_key" } },
    });
    expect(await post(stray, "/heartbeat", { ...heartbeat(stray.id), unresolved: -1 })).toMatchObject({
      status: 401,
      json: { error: { code: "unknown_key" } },
    });
    expect(await nonceCount(stray.key.publicKey)).toBe(0);
  });

  it("a pending and a revoked unit: 403 with their status, their rows unwritten", async () => {
    const p = simUnit("vm-0002");
    expect((await post(p, "/enroll", { unitId: p.id, label: "new" })).status).toBe(202);
    expect(await post(p, "/heartbeat", heartbeat(p.id))).toMatchObject({
      status: 403,
      json: { error: { code: "pending" } },
    });
    expect((await row(p.id)).last_heartbeat).toBeNull();
    const r = await approved("vm-0003");
    expect(await revokeUnit(ctx, r.id, "ann")).toBe("done");
    expect(await post(r, "/heartbeat", heartbeat(r.id))).toMatchObject({
      status: 403,
      json: { error: { code: "revoked" } },
    });
    expect((await row(r.id)).last_heartbeat).toBeNull();
    // A malformed body from a unit that is not approved gets the status answer first, as on other routes.
    expect(await post(p, "/heartbeat", "{not json")).toMatchObject({
      status: 403,
      json: { error: { code: "pending" } },
    });
  });

  it("a malformed body from an approved unit: 400, and its nonce is spent (the same request again is a replay)", async () => {
    const u = await approved("vm-0001");
    for (const body of ["{not json", { ...heartbeat(u.id), unresolved: -1 }, { ...heartbeat(u.id), x: 1 }]) {
      const send = once(u, body);
      const r = await send();
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.json()).toMatchObject({ error: { code: "malformed", message: expect.any(String) } });
      expect((await send()).json()).toMatchObject({ error: { code: "replay" } });
    }
    expect((await row(u.id)).last_heartbeat).toBeNull();
  });

  it("another unit's id in the body: 403 wrong_unit, neither row written, the nonce spent", async () => {
    const a = await approved("vm-0001");
    const b = await approved("vm-0002");
    const send = once(b, heartbeat(a.id));
    expect((await send()).json()).toMatchObject({ error: { code: "wrong_unit" } });
    expect((await send()).json()).toMatchObject({ error: { code: "replay" } });
    expect((await row(a.id)).last_heartbeat).toBeNull();
    expect((await row(b.id)).last_heartbeat).toBeNull();
    // Each unit's own heartbeat still goes through.
    expect((await post(a, "/heartbeat", heartbeat(a.id))).status).toBe(200);
    expect((await post(b, "/heartbeat", heartbeat(b.id))).status).toBe(200);
  });
});
