/**
 * The fleet's unit API (issue 16), in process (Fastify's inject), on SQLite and on a real PostgreSQL that
 * the file starts: enrolment (pending, approval, an id taken by another key, revocation) and every refusal
 * the security rules promise (unknown keys, signatures, skew, replays, another unit's key, malformed bodies,
 * SQL metacharacters and HTML stored verbatim).
 */
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import type { ManualClock } from "../../src/core/clock.js";
import { MAX_SKEW_MS } from "../../src/core/fleetAuth.js";
import { UNIT_API } from "../../src/core/fleetWire.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { createFleetApp, purgeNonces } from "../../src/fleet/server.js";
import { approveUnit, revokeUnit } from "../../src/fleet/units/index.js";
import { events, fault, send, session, signed, simUnit } from "../support/fleet.js";
import { heartbeat, unitApiOn } from "../support/fleetUnitApi.js";

describe.each(["sqlite", "postgres"] as const)("fleet unit API on %s", (dialect) => {
  let clock: ManualClock;
  let ctx: FleetContext;
  let app: FastifyInstance;
  const { post, approved, storedSeqs, committed } = unitApiOn(dialect, { dbPrefix: "api" }, (s) => {
    ({ clock, ctx, app } = s);
  });

  it("enrolment: pending until approved, status on re-enrolment, id taken by another key, revocation", async () => {
    const u = simUnit("vm-0001");
    const first = await post(u, "/enroll", { unitId: "vm-0001", label: "Lobby" });
    expect(first.status).toBe(202);
    expect(first.json).toMatchObject({ status: "pending" });
    const row = await ctx.db
      .selectFrom("units")
      .selectAll()
      .where("id", "=", "vm-0001")
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "pending", label: "Lobby", public_key: u.key.publicKey });
    expect((first.json as { fingerprint: string }).fingerprint).toBe(row.fingerprint);
    // Pending: nothing but enrol.
    expect(await post(u, "/events", { unitId: u.id, events: events(1, 1) })).toMatchObject({
      status: 403,
      json: { error: { code: "pending" } },
    });
    expect((await post(u, "/enroll", { unitId: "vm-0001", label: "Lobby" })).status).toBe(202);
    // Another key claiming the id; this key claiming another id.
    const thief = simUnit("vm-0001");
    expect(await post(thief, "/enroll", { unitId: "vm-0001", label: "x" })).toMatchObject({
      status: 409,
      json: { error: { code: "id_taken" } },
    });
    expect((await post(u, "/enroll", { unitId: "vm-0002", label: "x" })).status).toBe(409);
    expect(await approveUnit(ctx, "vm-0001", "ann")).toBe("done");
    expect(await post(u, "/enroll", { unitId: "vm-0001", label: "Lobby" })).toMatchObject({
      status: 200,
      json: { status: "approved" },
    });
    expect((await post(u, "/events", { unitId: u.id, events: events(1, 2) })).json).toEqual({ committed: 2 });
    expect(await revokeUnit(ctx, "vm-0001", "ann")).toBe("done");
    for (const [path, body] of [
      ["/events", { unitId: u.id, events: events(3, 3) }],
      ["/heartbeat", heartbeat(u.id)],
    ] as const) {
      expect(await post(u, path, body)).toMatchObject({ status: 403, json: { error: { code: "revoked" } } });
    }
    expect((await send(app, u.key, "GET", "/bundle", undefined, clock.now())).status).toBe(403);
    expect((await post(u, "/enroll", { unitId: "vm-0001", label: "Lobby" })).status).toBe(403);
    expect(await approveUnit(ctx, "vm-0001", "ann")).toBe("alreadyRevoked");
    expect(await storedSeqs("vm-0001")).toEqual([1, 2]); // what it sent before stays
  });

  describe("refusals", () => {
    it("an unenrolled key, an unsigned request, a tampered body, clock skew", async () => {
      const stray = simUnit("vm-0009");
      expect(await post(stray, "/events", { unitId: stray.id, events: events(1, 1) })).toMatchObject({
        status: 401,
        json: { error: { code: "unknown_key" } },
      });
      expect((await send(app, stray.key, "GET", "/bundle", undefined, clock.now())).status).toBe(401);
      const strayNonces = await ctx.db
        .selectFrom("nonces")
        .select("nonce")
        .where("public_key", "=", stray.key.publicKey)
        .execute();
      expect(strayNonces).toEqual([]); // a stranger's requests write nothing
      const u = await approved("vm-0001");
      const unsigned = await app.inject({
        method: "POST",
        url: `${UNIT_API}/events`,
        headers: { "content-type": "application/json" },
        payload: JSON.stringify({ unitId: u.id, events: events(1, 1) }),
      });
      expect(unsigned.statusCode).toBe(401);
      expect(unsigned.json()).toEqual({ error: { code: "unsigned", message: expect.any(String) } });
      const r = signed(u.key, "POST", "/events", { unitId: u.id, events: events(1, 1) }, clock.now());
      const tampered = await app.inject({
        method: "POST",
        url: r.url,
        headers: r.headers,
        payload: JSON.stringify({ unitId: u.id, events: events(1, 2) }),
      });
      expect(tampered.statusCode).toBe(401);
      expect(tampered.json()).toMatchObject({ error: { code: "signature" } });
      for (const skew of [MAX_SKEW_MS + 1000, -(MAX_SKEW_MS + 1000)]) {
        const late = await post(u, "/events", { unitId: u.id, events: events(1, 1) }, clock.now() + skew);
        expect(late).toMatchObject({ status: 401, json: { error: { code: "skew" } } });
      }
      expect(await storedSeqs(u.id)).toEqual([]);
    });

    it("a replayed request (same nonce) is refused, also after the fleet's restart; expired nonces are purged", async () => {
      const u = await approved("vm-0001");
      const r = signed(u.key, "POST", "/events", { unitId: u.id, events: events(1, 1) }, clock.now());
      const once = await app.inject({ method: "POST", url: r.url, headers: r.headers, payload: r.payload });
      expect(once.json()).toEqual({ committed: 1 });
      const replay = await app.inject({ method: "POST", url: r.url, headers: r.headers, payload: r.payload });
      expect(replay.statusCode).toBe(401);
      expect(replay.json()).toMatchObject({ error: { code: "replay" } });
      const app2 = await createFleetApp(ctx);
      const replay2 = await app2.inject({
        method: "POST",
        url: r.url,
        headers: r.headers,
        payload: r.payload,
      });
      expect(replay2.json()).toMatchObject({ error: { code: "replay" } });
      await app2.close();
      const count = async () => (await ctx.db.selectFrom("nonces").select("nonce").execute()).length;
      expect(await count()).toBe(2); // the enrolment's and the batch's
      clock.advance(MAX_SKEW_MS + 1);
      expect(await purgeNonces(ctx)).toBe(2);
      expect(await count()).toBe(0);
      // Past the window the replay is refused as skew.
      const late = await app.inject({ method: "POST", url: r.url, headers: r.headers, payload: r.payload });
      expect(late.json()).toMatchObject({ error: { code: "skew" } });
    });

    it("a request signed by another unit's key is refused (403), nothing stored for either unit", async () => {
      const a = await approved("vm-0001");
      const b = await approved("vm-0002");
      expect(await post(b, "/events", { unitId: a.id, events: events(1, 2) })).toMatchObject({
        status: 403,
        json: { error: { code: "wrong_unit" } },
      });
      expect((await post(b, "/heartbeat", heartbeat(a.id))).status).toBe(403);
      expect(await storedSeqs(a.id)).toEqual([]);
      expect(await storedSeqs(b.id)).toEqual([]);
      const unitA = await ctx.db
        .selectFrom("units")
        .select("last_heartbeat")
        .where("id", "=", a.id)
        .executeTakeFirstOrThrow();
      expect(unitA.last_heartbeat).toBeNull();
    });

    it("malformed bodies: 400 with a WireError, nothing stored", async () => {
      const u = await approved("vm-0001");
      const good = events(1, 1)[0];
      const bad: unknown[] = [
        "{not json",
        { unitId: u.id, events: [] },
        { unitId: u.id, events: [{ ...good, seq: 0 }] },
        { unitId: u.id, events: [{ ...session(1, "s"), data: { ...session(1, "s").data, price: -5 } }] },
        { unitId: u.id, events: [{ ...session(1, "s"), data: { ...session(1, "s").data, price: 2.5 } }] },
        { unitId: u.id, events: [{ ...good, extra: 1 }] },
        { unitId: u.id, events: [{ ...good, kind: "refund" }] },
        { unitId: u.id, events: events(1, 501) },
        { unitId: "vm'; DROP TABLE events; --", events: [good] },
        [1, 2, 3],
      ];
      for (const body of bad) {
        const r = await post(u, "/events", body);
        expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(r.json).toMatchObject({ error: { code: "malformed", message: expect.any(String) } });
      }
      const wrongType = await app.inject({
        method: "POST",
        url: `${UNIT_API}/events`,
        headers: {
          ...signed(u.key, "POST", "/events", "x", clock.now()).headers,
          "content-type": "text/plain",
        },
        payload: "x",
      });
      expect(wrongType.statusCode).toBe(415);
      expect(wrongType.json()).toMatchObject({ error: { code: "bad_request" } });
      const huge = await post(u, "/events", {
        unitId: u.id,
        events: [good],
        pad: "x".repeat(3 * 1024 * 1024),
      });
      expect(huge.status).toBe(413);
      expect(await storedSeqs(u.id)).toEqual([]);
      expect(await committed(u.id)).toBe(0);
      expect((await post(u, "/heartbeat", { ...heartbeat(u.id), unresolved: -1 })).status).toBe(400);
    });

    it("SQL metacharacters and HTML in labels, reasons and messages are stored and returned verbatim", async () => {
      const nasty = `Robert'); DROP TABLE units; -- "quoted" \\ back <script>alert(1)</script> ; DELETE FROM sales`;
      const u = simUnit("vm-0001");
      expect((await post(u, "/enroll", { unitId: u.id, label: nasty })).status).toBe(202);
      await approveUnit(ctx, u.id, nasty);
      const s = session(1, "s-1", { reason: nasty, paymentId: `p'1"; --` });
      const f = fault(2, nasty);
      expect((await post(u, "/events", { unitId: u.id, events: [s, f] })).json).toEqual({ committed: 2 });
      const unit = await ctx.db
        .selectFrom("units")
        .selectAll()
        .where("id", "=", u.id)
        .executeTakeFirstOrThrow();
      expect(unit.label).toBe(nasty);
      expect(unit.decided_by).toBe(nasty);
      const stored = await ctx.db.selectFrom("events").select(["seq", "data"]).orderBy("seq").execute();
      expect(JSON.parse(stored[0]?.data ?? "{}")).toEqual(s.data);
      expect(JSON.parse(stored[1]?.data ?? "{}")).toEqual(f.data);
      const sale = await ctx.db.selectFrom("sales").select("payment_id").executeTakeFirstOrThrow();
      expect(sale.payment_id).toBe(`p'1"; --`);
      expect(await approveUnit(ctx, "x' OR '1'='1", "ann")).toBe("notFound");
      expect(await revokeUnit(ctx, "x' OR '1'='1", "ann")).toBe("notFound");
      expect((await ctx.db.selectFrom("units").select("status").executeTakeFirstOrThrow()).status).toBe(
        "approved",
      );
    });
  });
});
