/**
 * The PostgreSQL ingest fast path (src/fleet/ingest/store.ts with db/unitStatementsPostgres.ts `ingestRun`), against a real PostgreSQL
 * that the file starts: a batch that continues the committed seq the request's authentication read is one
 * statement, and it stores exactly what the transaction stores (the same event and sales rows). When the
 * hint is stale (another batch came first) the statement writes nothing and the transaction decides; a
 * version event, a duplicate-only batch or an armed fault point take the transaction; an event already
 * stored past the committed seq fails the whole statement. Two processes sending the same batch at once
 * store it once. An events request's claim and its batch in one statement (ingest/store.ts `claimAndIngest`) store
 * the batch only for a fresh nonce of the key's own approved unit at its committed seq, record the nonce as
 * any claim does, and of a request and its replay sent at once store one. SQLite has no fast path (its
 * transaction is in process).
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { NO_FLEET_SERVER_FAULTS } from "../../src/core/faults.js";
import type { UnitEvent } from "../../src/core/fleetWire.js";
import type { FleetContext } from "../../src/fleet/context.js";
import type { FleetDb } from "../../src/fleet/db/open.js";
import { claimAndIngest, ingestBatch } from "../../src/fleet/ingest/store.js";
import { events, fleetContext, session } from "../support/fleet.js";
import { postgresAndDir } from "../support/postgres.js";

const T0 = Date.parse("2026-11-27T12:00:00Z");

const files = postgresAndDir("vendd-fleet-fast-");
let dbCount = 0;

/** A context whose `ingestRun` records each call's answer. */
function counting(ctx: FleetContext): { ctx: FleetContext; calls: boolean[] } {
  const calls: boolean[] = [];
  const hot = ctx.hot;
  const run = hot?.ingestRun;
  if (hot === undefined || run === undefined) throw new Error("no ingestRun");
  return {
    calls,
    ctx: {
      ...ctx,
      hot: {
        ...hot,
        ingestRun: async (r) => {
          const applied = await run(r);
          calls.push(applied);
          return applied;
        },
      },
    },
  };
}

async function addUnit(
  ctx: FleetContext,
  id: string,
  status: "pending" | "approved" | "revoked" = "approved",
): Promise<void> {
  await ctx.db
    .insertInto("units")
    .values({
      id,
      public_key: `key-${id}`,
      fingerprint: "fp",
      label: "site",
      status,
      enrolled_at: T0,
      backlog_events: 0,
      unresolved: 0,
    })
    .execute();
}

async function storedOf(ctx: FleetContext, unitId: string) {
  const ev = await ctx.db
    .selectFrom("events")
    .select(["seq", "at", "kind", "data", "received_at"])
    .where("unit_id", "=", unitId)
    .orderBy("seq")
    .execute();
  const sales = await ctx.db
    .selectFrom("sales")
    .selectAll()
    .where("unit_id", "=", unitId)
    .orderBy("session_id")
    .execute();
  const unit = await ctx.db
    .selectFrom("units")
    .select(["committed_seq", "last_seen_at"])
    .where("id", "=", unitId)
    .executeTakeFirstOrThrow();
  return {
    events: ev.map((e) => ({
      ...e,
      seq: Number(e.seq),
      at: Number(e.at),
      received_at: Number(e.received_at),
    })),
    sales: sales.map(({ unit_id: _, ...s }) => s),
    committed: Number(unit.committed_seq),
    lastSeen: unit.last_seen_at === null ? null : Number(unit.last_seen_at),
  };
}

/** A version event at `seq`: config 7 applied, from no bundle. */
function configApplied(seq: number): UnitEvent {
  return {
    seq,
    at: T0,
    kind: "version",
    data: { kind: "config", bundleId: null, version: "7", outcome: "applied", reason: "" },
  };
}

describe("ingest fast path on PostgreSQL", () => {
  let clock: ManualClock;
  let a: { ctx: FleetContext; fdb: FleetDb };
  let b: { ctx: FleetContext; fdb: FleetDb };

  beforeEach(async () => {
    clock = new ManualClock(T0);
    const target = await files.pg.createDatabase(`fast_${++dbCount}`);
    a = await fleetContext(target, clock);
    b = await fleetContext(target, clock);
  });

  afterEach(async () => {
    await a.fdb.close();
    await b.fdb.close();
  });

  it("one statement stores the same rows as the transaction; a re-reported session replaces its row", async () => {
    const { ctx, calls } = counting(a.ctx);
    await addUnit(ctx, "vm-fast");
    await addUnit(ctx, "vm-trx");
    const batch: UnitEvent[] = [
      ...events(1, 9, "s"),
      // session s2 again, now refunded: its sales row is replaced (higher seq)
      session(10, "s2", { result: "captured", refunded: 100 }),
      session(11, "s-member", {
        driver: "plan",
        member: { memberId: "m-1", planId: "p-1" },
        paymentId: null,
      }),
    ];
    const fast = await ingestBatch(ctx, "vm-fast", batch, NO_FLEET_SERVER_FAULTS, 0);
    const trx = await ingestBatch(ctx, "vm-trx", batch, NO_FLEET_SERVER_FAULTS);
    expect(calls).toEqual([true]);
    expect(fast).toEqual({ committed: 11, stored: 11, duplicates: 0, pastGap: 0 });
    expect(trx).toEqual(fast);
    const f = await storedOf(ctx, "vm-fast");
    expect(f).toEqual(await storedOf(ctx, "vm-trx"));
    expect(f.committed).toBe(11);
    expect(f.lastSeen).toBe(T0);
    expect(f.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(JSON.parse(f.events[0]?.data ?? "")).toEqual(batch[0]?.data);
    const s2 = f.sales.find((s) => s.session_id === "s2");
    expect(s2).toMatchObject({ seq: 10, refunded: 100, captured: 250, vends_ok: 1, day: "2026-01-01" });
    expect(f.sales.find((s) => s.session_id === "s-member")).toMatchObject({
      member_id: "m-1",
      plan_id: "p-1",
      payment_id: null,
      driver: "plan",
    });
    expect(f.sales.map((x) => x.session_id)).toEqual(["s-member", "s2", "s4", "s6", "s8"]); // s2 once
  });

  it("a stale hint writes nothing and the transaction decides; a duplicate-only batch skips the statement", async () => {
    const { ctx, calls } = counting(a.ctx);
    await addUnit(ctx, "vm-1");
    expect(await ingestBatch(ctx, "vm-1", events(1, 12), NO_FLEET_SERVER_FAULTS, 0)).toMatchObject({
      committed: 12,
    });
    // The request read committed 10 (another batch committed 11 and 12 since): overlap 11..15.
    const r = await ingestBatch(ctx, "vm-1", events(11, 15), NO_FLEET_SERVER_FAULTS, 10);
    expect(r).toEqual({ committed: 15, stored: 3, duplicates: 2, pastGap: 0 });
    expect(calls).toEqual([true, false]);
    const again = await ingestBatch(ctx, "vm-1", events(1, 15), NO_FLEET_SERVER_FAULTS, 15);
    expect(again).toEqual({ committed: 15, stored: 0, duplicates: 15, pastGap: 0 });
    expect(calls).toEqual([true, false]);
    const s = await storedOf(ctx, "vm-1");
    expect(s.events.map((e) => e.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(s.committed).toBe(15);
  });

  it("a version event or an armed fault point takes the transaction", async () => {
    const { ctx, calls } = counting(a.ctx);
    await addUnit(ctx, "vm-2");
    const version = configApplied(3);
    await ingestBatch(ctx, "vm-2", [...events(1, 2), version], NO_FLEET_SERVER_FAULTS, 0);
    const armed = { hit() {}, armed: true };
    await ingestBatch(ctx, "vm-2", events(4, 6), armed, 3);
    expect(calls).toEqual([]);
    const unit = await ctx.db
      .selectFrom("units")
      .select(["committed_seq", "config_version"])
      .where("id", "=", "vm-2")
      .executeTakeFirstOrThrow();
    expect({ ...unit, committed_seq: Number(unit.committed_seq) }).toEqual({
      committed_seq: 6,
      config_version: "7",
    });
  });

  it("an event already stored past the committed seq fails the statement: nothing of the batch is kept", async () => {
    const { ctx } = counting(a.ctx);
    await addUnit(ctx, "vm-3");
    await ingestBatch(ctx, "vm-3", events(1, 4), NO_FLEET_SERVER_FAULTS, 0);
    await ctx.db
      .insertInto("events")
      .values({ unit_id: "vm-3", seq: 6, at: T0, kind: "fault", data: "{}", received_at: T0 })
      .execute();
    await expect(ingestBatch(ctx, "vm-3", events(5, 8), NO_FLEET_SERVER_FAULTS, 4)).rejects.toThrow();
    const s = await storedOf(ctx, "vm-3");
    expect(s.committed).toBe(4);
    expect(s.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 6]);
    expect(s.sales.map((x) => x.session_id).sort()).toEqual(["s2", "s4"]);
  });

  it("two processes storing the same batch at once: stored once, both answer the committed seq", async () => {
    await addUnit(a.ctx, "vm-4");
    for (let from = 1; from <= 200; from += 20) {
      const batch = events(from, from + 19);
      const [x, y] = await Promise.all([
        ingestBatch(a.ctx, "vm-4", batch, NO_FLEET_SERVER_FAULTS, from - 1),
        ingestBatch(b.ctx, "vm-4", batch, NO_FLEET_SERVER_FAULTS, from - 1),
      ]);
      expect([x.committed, y.committed]).toEqual([from + 19, from + 19]);
      expect(x.stored + y.stored).toBe(20);
    }
    const s = await storedOf(a.ctx, "vm-4");
    expect(s.committed).toBe(200);
    expect(s.events.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(s.sales).toHaveLength(100);
  });

  const claimOf = (id: string, nonce: string) => ({ publicKey: `key-${id}`, nonce, expiresAt: T0 + 1000 });
  const noncesOf = async (id: string) =>
    (await a.ctx.db.selectFrom("nonces").select("nonce").where("public_key", "=", `key-${id}`).execute())
      .map((r) => r.nonce)
      .sort();
  const unitRow = (id: string, status: string, committed: number) => ({
    id,
    status,
    committed_seq: committed,
  });

  it("claimAndIngest (claim and batch in one statement) stores the batch only for a fresh nonce of the key's own approved unit at its committed seq", async () => {
    const { ctx } = a;
    for (const [id, status] of [
      ["vm-own", "approved"],
      ["vm-other", "approved"],
      ["vm-pend", "pending"],
      ["vm-rev", "revoked"],
    ] as const)
      await addUnit(ctx, id, status);
    const own = (nonce: string, unitId: string, batch: UnitEvent[]) =>
      claimAndIngest(ctx, claimOf("vm-own", nonce), unitId, batch);

    expect(await own("n1", "vm-own", events(1, 3))).toEqual({
      unit: unitRow("vm-own", "approved", 0),
      fresh: true,
      result: { committed: 3, stored: 3, duplicates: 0, pastGap: 0 },
    });
    // The same nonce again (a replay, here with another body): not fresh, nothing stored.
    expect(await own("n1", "vm-own", events(4, 5))).toMatchObject({ fresh: false, result: null });
    // Another unit's id in the body of this key's request: the nonce is spent, nothing stored for either.
    expect(await own("n2", "vm-other", events(1, 2))).toEqual({
      unit: unitRow("vm-own", "approved", 3),
      fresh: true,
      result: null,
    });
    // A resend from before the committed seq (its answer was lost): claimed, not stored here; the claim
    // answers the committed seq, with which ingestBatch stores the rest.
    const resend = await own("n3", "vm-own", events(2, 6));
    expect(resend).toEqual({ unit: unitRow("vm-own", "approved", 3), fresh: true, result: null });
    expect(await ingestBatch(ctx, "vm-own", events(2, 6), NO_FLEET_SERVER_FAULTS, 3)).toEqual({
      committed: 6,
      stored: 3,
      duplicates: 2,
      pastGap: 0,
    });
    // A unit not approved: the nonce is recorded (as for any request of a known key), nothing stored.
    for (const id of ["vm-pend", "vm-rev"]) {
      const r = await claimAndIngest(ctx, claimOf(id, "p1"), id, events(1, 2));
      expect(r).toEqual({
        unit: unitRow(id, id === "vm-pend" ? "pending" : "revoked", 0),
        fresh: true,
        result: null,
      });
      expect(await noncesOf(id)).toEqual(["p1"]);
    }
    // An unknown key writes nothing at all.
    expect(await claimAndIngest(ctx, claimOf("vm-none", "x1"), "vm-own", events(7, 8))).toEqual({
      unit: null,
      fresh: false,
      result: null,
    });
    expect(await noncesOf("vm-none")).toEqual([]);

    expect(await noncesOf("vm-own")).toEqual(["n1", "n2", "n3"]);
    const s = await storedOf(ctx, "vm-own");
    expect(s.committed).toBe(6);
    expect(s.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const id of ["vm-other", "vm-pend", "vm-rev"]) {
      const o = await storedOf(ctx, id);
      expect({ id, committed: o.committed, events: o.events.length, sales: o.sales.length }).toEqual({
        id,
        committed: 0,
        events: 0,
        sales: 0,
      });
    }
  });

  it("claimAndIngest with a version event or an armed fault point: no statement, no nonce (the caller claims it on its own)", async () => {
    const { ctx } = a;
    await addUnit(ctx, "vm-5");
    const version = configApplied(2);
    expect(await claimAndIngest(ctx, claimOf("vm-5", "v1"), "vm-5", [...events(1, 1), version])).toBeNull();
    const armed = { hit() {}, armed: true };
    expect(await claimAndIngest(ctx, claimOf("vm-5", "v2"), "vm-5", events(1, 2), armed)).toBeNull();
    expect(await noncesOf("vm-5")).toEqual([]);
    expect((await storedOf(ctx, "vm-5")).events).toEqual([]);
  });

  it("claimAndIngest of a request and its replay at once from two processes: one is stored, the other refused as a replay", async () => {
    await addUnit(a.ctx, "vm-6");
    for (let from = 1; from <= 100; from += 10) {
      const batch = events(from, from + 9);
      const claim = claimOf("vm-6", `r${from}`);
      const [x, y] = await Promise.all([
        claimAndIngest(a.ctx, claim, "vm-6", batch),
        claimAndIngest(b.ctx, claim, "vm-6", batch),
      ]);
      expect([x?.fresh, y?.fresh].sort()).toEqual([false, true]);
      const stored = [x, y].filter((c) => c?.result != null);
      expect(stored).toHaveLength(1);
      expect(stored[0]?.result).toEqual({ committed: from + 9, stored: 10, duplicates: 0, pastGap: 0 });
    }
    const s = await storedOf(a.ctx, "vm-6");
    expect(s.committed).toBe(100);
    expect(s.events.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });
});

describe("ingest on SQLite", () => {
  it("has no fast path: the hot path has no ingestRun, a hinted batch takes the transaction", async () => {
    const { ctx, fdb } = await fleetContext(join(files.dir, "fleet.db"), new ManualClock(T0));
    try {
      expect(ctx.hot?.ingestRun).toBeUndefined();
      await addUnit(ctx, "vm-s");
      expect(await ingestBatch(ctx, "vm-s", events(1, 5), NO_FLEET_SERVER_FAULTS, 0)).toEqual({
        committed: 5,
        stored: 5,
        duplicates: 0,
        pastGap: 0,
      });
    } finally {
      await fdb.close();
    }
  });
});
