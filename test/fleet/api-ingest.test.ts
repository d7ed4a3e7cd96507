/**
 * The fleet's unit API (issue 16), in process (Fastify's inject), on SQLite and on a real PostgreSQL that
 * the file starts: exactly-once ingest (duplicates, overlaps, gaps), the sales upsert by session, sales days
 * in the fleet's time zone, and heartbeats.
 */
import { describe, expect, it } from "vitest";
import type { FleetContext } from "../../src/fleet/context.js";
import { events, fault, session } from "../support/fleet.js";
import { heartbeat, T0, unitApiOn } from "../support/fleetUnitApi.js";

describe.each(["sqlite", "postgres"] as const)("fleet unit API on %s", (dialect) => {
  let ctx: FleetContext;
  const { post, approved, storedSeqs, committed } = unitApiOn(dialect, { dbPrefix: "ingest" }, (s) => {
    ({ ctx } = s);
  });
  const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

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
});

describe.each(["sqlite", "postgres"] as const)("fleet money on %s (issue 30 defect 6)", (dialect) => {
  let ctx: FleetContext;
  const { post, approved, storedSeqs } = unitApiOn(dialect, { dbPrefix: "money30" }, (s) => {
    ({ ctx } = s);
  });

  it("a batch holding an impossible session is refused whole, naming the field; nothing is stored", async () => {
    const u = await approved("vm-0030");
    const impossible = [
      { captured: 300 }, // captured > approved (= price 250)
      { approved: 300, captured: 300 }, // approved > price
      { refunded: 260 }, // refunded > captured
      { openedAt: 1_767_225_600_000 + 2 * 60_000 + 1 }, // closed before opened
      { price: 10 ** 13, approved: 10 ** 13, captured: 10 ** 13 }, // above the largest configurable price
    ];
    for (const over of impossible) {
      const r = await post(u, "/events", {
        unitId: u.id,
        events: [session(1, "s-ok"), session(2, "s-bad", over)],
      });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json)).toMatch(/events\.1\.data\.(captured|approved|refunded|closedAt|price)/);
      expect(await storedSeqs(u.id)).toEqual([]);
    }
    const none = await ctx.db.selectFrom("sales").select("seq").where("unit_id", "=", u.id).execute();
    expect(none).toEqual([]);
  });

  it("sums at the 2^53 boundary are exact in the totals, the API and the CSV", async () => {
    const u = await approved("vm-0053");
    expect(
      (await post(u, "/events", { unitId: u.id, events: [session(1, "s-a"), session(2, "s-b")] })).json,
    ).toEqual({ committed: 2 });
    // Amounts no unit can send (the ingest refuses them): written straight into the table.
    const big = [2 ** 53 - 1, 2 ** 53 - 2];
    for (const [i, v] of big.entries())
      await ctx.db
        .updateTable("sales")
        .set({ captured: v, approved: v, price: v })
        .where("unit_id", "=", u.id)
        .where("seq", "=", i + 1)
        .execute();
    const { totals, salesBy } = await import("../../src/fleet/sales/store.js");
    const day = "2026-01-01";
    const t = await totals(ctx, { from: day, to: day, unit: u.id });
    expect(t).toEqual([expect.objectContaining({ currency: "NOK", captured: 18014398509481981n })]);
    const rows = await salesBy(ctx, { from: day, to: day, unit: u.id }, "unit");
    expect(rows[0]?.net).toBe(18014398509481981n);
    const { exactJson } = await import("../../src/fleet/web/json.js");
    expect(exactJson({ rows })).toContain('"captured":18014398509481981,');
    const { money } = await import("../../src/fleet/web/pages.js");
    expect(money(rows[0]?.captured ?? 0n, "NOK")).toBe("180143985094819.81");
  });
});
