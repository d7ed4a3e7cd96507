/**
 * The fleet's unit API (issue 16), in process (Fastify's inject), on SQLite and on a real PostgreSQL that
 * the file starts: enrolment, exactly-once ingest (duplicates, overlaps, gaps), the sales upsert by session,
 * heartbeats, bundles and rollouts, and every refusal the security rules promise.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/core/clock.js";
import { MAX_SKEW_MS } from "../src/core/fleetAuth.js";
import { UNIT_API } from "../src/core/fleetWire.js";
import { BundleUploadError, storeBundle } from "../src/fleet/bundles.js";
import type { FleetContext } from "../src/fleet/context.js";
import type { FleetDb } from "../src/fleet/db/open.js";
import { createFleetApp, purgeNonces } from "../src/fleet/server.js";
import { approveUnit, revokeUnit } from "../src/fleet/units.js";
import { createBundle, trustedCommentOf } from "../src/update/bundle.js";
import { parsePublicKey } from "../src/update/minisign.js";
import { makeKey, signWith, type TestKey } from "../src/update/test-support.js";
import {
  events,
  fault,
  fleetContext,
  type SimUnit,
  send,
  session,
  signed,
  simUnit,
} from "./support/fleet.js";
import { startPostgres, type TestPostgres } from "./support/postgres.js";

const T0 = Date.parse("2026-11-25T12:00:00Z");

let pgServer: TestPostgres | null = null;
let dbCount = 0;
let signer: TestKey;
let stranger: TestKey;

beforeAll(async () => {
  [signer, stranger] = await Promise.all([makeKey("fleet-test"), makeKey("other")]);
}, 30_000);

afterAll(async () => {
  await pgServer?.stop();
}, 30_000);

describe.each(["sqlite", "postgres"] as const)("fleet unit API on %s", (dialect) => {
  let clock: ManualClock;
  let ctx: FleetContext;
  let fdb: FleetDb;
  let app: FastifyInstance;

  beforeAll(async () => {
    if (dialect === "postgres" && pgServer === null) pgServer = await startPostgres();
  }, 60_000);

  beforeEach(async () => {
    clock = new ManualClock(T0);
    const target =
      dialect === "sqlite" ? ":memory:" : await (pgServer as TestPostgres).createDatabase(`api_${++dbCount}`);
    ({ ctx, fdb } = await fleetContext(target, clock, "Europe/Oslo"));
    app = await createFleetApp(ctx);
    await app.ready();
  });

  afterEach(async () => {
    await app.close();
    await fdb.close();
  });

  const post = (u: SimUnit, path: string, body: unknown, at = clock.now()) =>
    send(app, u.key, "POST", path, body, at);

  async function approved(id: string, label = "site"): Promise<SimUnit> {
    const u = simUnit(id);
    expect((await post(u, "/enroll", { unitId: id, label })).status).toBe(202);
    expect(await approveUnit(ctx, id, "manager")).toBe("done");
    return u;
  }

  const storedSeqs = async (unitId: string) =>
    (
      await ctx.db.selectFrom("events").select("seq").where("unit_id", "=", unitId).orderBy("seq").execute()
    ).map((r) => r.seq);
  const committed = async (unitId: string) =>
    (
      await ctx.db
        .selectFrom("units")
        .select("committed_seq")
        .where("id", "=", unitId)
        .executeTakeFirstOrThrow()
    ).committed_seq;
  const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

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

  it("ingest is idempotent: the same batch twice, overlapping batches, a gap never acknowledged past", async () => {
    const u = await approved("vm-0001");
    const batch = { unitId: u.id, events: events(1, 3) };
    expect((await post(u, "/events", batch)).json).toEqual({ committed: 3 });
    expect((await post(u, "/events", batch)).json).toEqual({ committed: 3 });
    expect(await storedSeqs(u.id)).toEqual([1, 2, 3]);
    expect((await post(u, "/events", { unitId: u.id, events: events(2, 6) })).json).toEqual({ committed: 6 });
    expect(await storedSeqs(u.id)).toEqual(range(1, 6));
    // 7 is missing: 8..10 are not acknowledged, and not kept until 7 arrives.
    expect((await post(u, "/events", { unitId: u.id, events: events(8, 10) })).json).toEqual({
      committed: 6,
    });
    expect(await storedSeqs(u.id)).toEqual(range(1, 6));
    expect(await committed(u.id)).toBe(6);
    // The unit re-sends from 7; a batch out of order is sorted.
    const refill = events(7, 12).reverse();
    expect((await post(u, "/events", { unitId: u.id, events: refill })).json).toEqual({ committed: 12 });
    expect(await storedSeqs(u.id)).toEqual(range(1, 12));
    const sales = await ctx.db
      .selectFrom("sales")
      .select(["seq", "captured"])
      .where("unit_id", "=", u.id)
      .execute();
    expect(sales.map((s) => s.seq).sort((a, b) => a - b)).toEqual([2, 4, 6, 8, 10, 12]);
    // A second unit's seqs are its own.
    const v = await approved("vm-0002");
    expect((await post(v, "/events", { unitId: v.id, events: events(1, 2, "t") })).json).toEqual({
      committed: 2,
    });
    expect(await committed(u.id)).toBe(12);
  });

  it("sales: a re-reported session replaces its row (no double count); an older report never wins", async () => {
    const u = await approved("vm-0001");
    const unsettled = session(1, "s-1", { result: "unsettled", captured: 0 });
    const settled = session(3, "s-1", {
      result: "captured",
      captured: 250,
      member: { memberId: "m-7", planId: "gold" },
    });
    const refunded = session(4, "s-1", {
      result: "captured",
      captured: 250,
      refunded: 250,
      vends: [{ item: 12, price: 250, outcome: "failure" }],
    });
    expect((await post(u, "/events", { unitId: u.id, events: [unsettled, fault(2), settled] })).json).toEqual(
      {
        committed: 3,
      },
    );
    let rows = await ctx.db.selectFrom("sales").selectAll().where("unit_id", "=", u.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      seq: 3,
      session_id: "s-1",
      result: "captured",
      captured: 250,
      refunded: 0,
      vends_ok: 1,
      vends_failed: 0,
      member_id: "m-7",
      plan_id: "gold",
      day: "2026-01-01",
    });
    expect((await post(u, "/events", { unitId: u.id, events: [refunded] })).json).toEqual({ committed: 4 });
    // The same batches again change nothing.
    await post(u, "/events", { unitId: u.id, events: [unsettled, fault(2), settled, refunded] });
    rows = await ctx.db.selectFrom("sales").selectAll().where("unit_id", "=", u.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ seq: 4, refunded: 250, vends_ok: 0, vends_failed: 1, member_id: null });
    const total = await ctx.db
      .selectFrom("sales")
      .select((eb) => eb.fn.sum<number>("captured").as("c"))
      .executeTakeFirstOrThrow();
    expect(Number(total.c)).toBe(250);
  });

  it("sales days are counted in the fleet's time zone", async () => {
    const u = await approved("vm-0001");
    const lateEvening = Date.parse("2026-03-01T23:30:00Z"); // 00:30 on 2 March in Oslo
    await post(u, "/events", { unitId: u.id, events: [session(1, "s-late", { closedAt: lateEvening })] });
    const row = await ctx.db.selectFrom("sales").select("day").executeTakeFirstOrThrow();
    expect(row.day).toBe("2026-03-02");
  });

  it("heartbeat: stores the unit's state and answers the fleet's clock, committed seq and bundle ETag", async () => {
    const u = await approved("vm-0001");
    await post(u, "/events", { unitId: u.id, events: events(1, 4) });
    const hb = heartbeat(u.id);
    const r = await post(u, "/heartbeat", hb);
    expect(r).toMatchObject({ status: 200, json: { now: T0, committed: 4, bundleEtag: null } });
    const row = await ctx.db.selectFrom("units").selectAll().where("id", "=", u.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      last_seen_at: T0,
      config_version: "7",
      release_version: "1.4.0",
      backlog_events: 12,
      backlog_oldest_at: T0 - 3_600_000,
      unresolved: 1,
    });
    expect(JSON.parse(row.last_heartbeat ?? "null")).toEqual(hb);
  });

  it("bundles: one targeting a fleet name goes to the units whose heartbeat names that fleet", async () => {
    const inFleet = await approved("vm-0101");
    const elsewhere = await approved("vm-0102");
    const { bundle } = createBundle({
      configText: "unit: {id: any}\n",
      release: null,
      version: 3,
      targets: ["lobby-fleet"],
      expires: "2031-01-01",
    });
    const stored = await storeBundle(ctx, signWith(bundle, [signer]), "ann", [
      parsePublicKey(signer.publicKeyText),
    ]);
    const etagOfHeartbeat = async (unit: typeof inFleet, fleet: string | null) =>
      ((await post(unit, "/heartbeat", { ...heartbeat(unit.id), fleet })).json as { bundleEtag: unknown })
        .bundleEtag;
    expect(await etagOfHeartbeat(inFleet, "lobby-fleet")).toBe(`"${stored.sha256}"`);
    expect(await etagOfHeartbeat(elsewhere, "other-fleet")).toBeNull();
    // GET /bundle goes by the fleet the unit's last heartbeat named.
    expect((await send(app, inFleet.key, "GET", "/bundle", undefined, clock.now())).status).toBe(200);
    expect((await send(app, elsewhere.key, "GET", "/bundle", undefined, clock.now())).status).toBe(404);
  });

  it("bundles: stored when signed, newest for the unit by conditional GET, rollout pending → applied | rolledBack", async () => {
    const u = await approved("vm-0001");
    const other = await approved("vm-0002");
    const { bundle, manifest } = createBundle({
      configText: "unit: {id: vm-0001}\n",
      release: null,
      version: 8,
      targets: ["vm-0001", "vm-0003"],
      expires: "2031-01-01",
    });
    const refusal = async (bytes: Buffer, keys: TestKey[] = []) => {
      try {
        await storeBundle(
          ctx,
          bytes,
          "ann",
          keys.length === 0 ? undefined : keys.map((k) => parsePublicKey(k.publicKeyText)),
        );
        return "stored";
      } catch (err) {
        if (err instanceof BundleUploadError) return err.code;
        throw err;
      }
    };
    expect(await refusal(bundle)).toBe("unsigned");
    expect(["not_a_bundle", "truncated"]).toContain(await refusal(Buffer.from("not a bundle at all")));
    const another = createBundle({
      configText: "unit: {id: vm-0001}\n",
      release: null,
      version: 9,
      targets: ["vm-0001"],
      expires: "2031-01-01",
    });
    expect(await refusal(signWith(bundle, [signer], trustedCommentOf(another.manifest)))).toBe(
      "another_file",
    );
    const tooNew = trustedCommentOf({ ...manifest, version: 99 });
    expect(await refusal(signWith(bundle, [signer], tooNew))).toBe("comment_mismatch");
    const signedBundle = signWith(bundle, [signer]);
    expect(await refusal(signedBundle, [stranger])).toBe("unknown_key");
    // `vendd fleet serve --bundle-key` keys are storeBundle's default (the dashboard's upload uses it).
    ctx.bundleKeys = [parsePublicKey(stranger.publicKeyText)];
    expect(await refusal(signedBundle)).toBe("unknown_key");
    ctx.bundleKeys = undefined;
    expect(await ctx.db.selectFrom("bundles").select("id").execute()).toEqual([]);
    const stored = await storeBundle(ctx, signedBundle, "ann", [parsePublicKey(signer.publicKeyText)]);
    expect(stored).toMatchObject({ id: manifest.id, kind: "config", version: "8", created: true });
    expect((await storeBundle(ctx, signedBundle, "ann")).created).toBe(false);

    const hb = await post(u, "/heartbeat", heartbeat(u.id));
    const etag = `"${stored.sha256}"`;
    expect((hb.json as { bundleEtag: string }).bundleEtag).toBe(etag);
    expect(
      ((await post(other, "/heartbeat", heartbeat(other.id))).json as { bundleEtag: unknown }).bundleEtag,
    ).toBeNull();
    expect((await send(app, other.key, "GET", "/bundle", undefined, clock.now())).status).toBe(404);

    const got = await send(app, u.key, "GET", "/bundle", undefined, clock.now());
    expect(got.status).toBe(200);
    expect(got.headers.etag).toBe(etag);
    expect(got.headers["content-type"]).toBe("application/octet-stream");
    expect(got.raw.equals(signedBundle)).toBe(true);
    const again = await send(app, u.key, "GET", "/bundle", undefined, clock.now(), { "if-none-match": etag });
    expect(again.status).toBe(304);
    const rollout = () =>
      ctx.db
        .selectFrom("rollouts")
        .select(["state", "reason"])
        .where("unit_id", "=", u.id)
        .executeTakeFirstOrThrow();
    expect(await rollout()).toEqual({ state: "pending", reason: "" });

    const version = (seq: number, outcome: "applied" | "rolledBack", reason: string) => ({
      seq,
      at: T0,
      kind: "version" as const,
      data: { kind: "config" as const, bundleId: manifest.id, version: "8", outcome, reason },
    });
    await post(u, "/events", { unitId: u.id, events: [version(1, "applied", "")] });
    expect(await rollout()).toEqual({ state: "applied", reason: "" });
    const why = "health gate: VMC link down 90 s; it's \"down\" -- '; DROP TABLE rollouts; --";
    await post(u, "/events", { unitId: u.id, events: [version(2, "rolledBack", why)] });
    expect(await rollout()).toEqual({ state: "rolledBack", reason: why });
    const unit = await ctx.db
      .selectFrom("units")
      .select("config_version")
      .where("id", "=", u.id)
      .executeTakeFirstOrThrow();
    expect(unit.config_version).toBe("8");
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

function heartbeat(unitId: string) {
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
