/**
 * Exactly-once ingest of a unit's outbox events. One batch is one database transaction: the events, the
 * sales rows their sessions make, the rollout states their version changes make, and the unit's
 * `committed_seq` are committed together or not at all, so a fleet process that dies mid-batch leaves
 * nothing half-stored and the unit's resend stores each event once.
 *
 * Only the run of events that continues the unit's committed sequence is stored (committed + 1, + 2, …):
 * an event past a gap is not kept until the gap is filled (the unit re-sends from committed + 1), so the
 * stored events of a unit are always 1..committed_seq, each once, and `committed_seq` never passes a gap.
 * Batches of one unit are serialised: on PostgreSQL by locking the unit's row (`FOR UPDATE`), on SQLite by
 * its single writer.
 */

import type { Transaction } from "kysely";
import { type FleetServerFaultPoints, NO_FLEET_SERVER_FAULTS } from "../../core/faults.js";
import type { SessionData, UnitEvent, VersionData } from "../../core/fleetWire.js";
import { dayOf, type FleetContext } from "../context.js";
import type { FleetDatabase, SalesTable } from "../db/schema.js";
import type { IngestRun, UnitAuthRow } from "../db/unitStatements.js";
import { storeDexRead } from "../dex/index.js";

export interface IngestResult {
  /** The unit's committed seq after the batch. */
  committed: number;
  /** Events of the batch newly stored. */
  stored: number;
  /** Events already stored (a resend), skipped. */
  duplicates: number;
  /** Events past a gap, not stored (the unit sends them again). */
  pastGap: number;
}

/** The run of `sorted` (ascending seq) that continues `committed`, and what is not in it. */
function runOf(
  sorted: readonly UnitEvent[],
  from: number,
): { run: UnitEvent[]; committed: number; duplicates: number; pastGap: number } {
  const run: UnitEvent[] = [];
  let committed = from;
  let duplicates = 0;
  let pastGap = 0;
  for (const event of sorted) {
    if (event.seq <= committed) duplicates++;
    else if (event.seq === committed + 1) {
      run.push(event);
      committed = event.seq;
    } else pastGap++;
  }
  return { run, committed, duplicates, pastGap };
}

/**
 * Stores a batch for `unitId` (an approved unit: the caller checked). Returns the committed seq; throws
 * (and stores nothing) when the database refuses.
 *
 * `committedHint` is the unit's committed seq as the request's authentication read it. On PostgreSQL
 * (`ctx.hot.ingestRun`) a run that continues it, with no version event in it, is stored in one statement
 * that checks the hint still holds (db/unitStatementsPostgres.ts): one round trip instead of six. When it no longer holds (a
 * concurrent batch of the unit came first), or with an armed fault point (whose step is inside the
 * transaction below), the batch takes the transaction.
 */
export async function ingestBatch(
  ctx: FleetContext,
  unitId: string,
  events: readonly UnitEvent[],
  faults: FleetServerFaultPoints = NO_FLEET_SERVER_FAULTS,
  committedHint?: number,
): Promise<IngestResult> {
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  const ingestRun = ctx.hot?.ingestRun;
  if (ingestRun !== undefined && committedHint !== undefined && faults.armed !== true) {
    const fast = fastRun(ctx, unitId, sorted, committedHint);
    if (fast !== null && (await ingestRun(fast.run))) return fast.result;
  }
  return ingestTransaction(ctx, unitId, sorted, faults);
}

/**
 * The one-statement form of a batch (db/unitStatements.ts `IngestRun`) if `hint` is the unit's committed seq, and what
 * it stores; null when there is none: nothing continues `hint`, or a version event is in the run (its
 * rollout states take the transaction).
 */
function fastRun(
  ctx: FleetContext,
  unitId: string,
  sorted: readonly UnitEvent[],
  hint: number,
): { run: IngestRun; result: IngestResult } | null {
  const fast = runOf(sorted, hint);
  // Versions and DEX reads write their own tables: the transaction path below.
  if (fast.run.length === 0 || fast.run.some((e) => e.kind === "version" || e.kind === "dex")) return null;
  return {
    run: {
      unitId,
      expected: hint,
      committed: fast.committed,
      now: ctx.clock.now(),
      events: fast.run.map((e) => ({ seq: e.seq, at: e.at, kind: e.kind, data: JSON.stringify(e.data) })),
      sales: salesRows(ctx, latestSessions(fast.run)),
    },
    result: {
      committed: fast.committed,
      stored: fast.run.length,
      duplicates: fast.duplicates,
      pastGap: fast.pastGap,
    },
  };
}

/** What claimAndIngest decided: the claim's answer, and the batch's result if it was stored. */
export interface ClaimedIngest {
  unit: UnitAuthRow | null;
  fresh: boolean;
  /** Null: not stored (the claim refused, another unit's id, or the batch does not start at the unit's committed seq). */
  result: IngestResult | null;
}

/**
 * An events request's nonce claim and its batch in one statement (PostgreSQL, db/unitStatements.ts `claimIngestRun`):
 * one durable round trip instead of two. It assumes the batch starts right after the unit's committed seq,
 * as a unit's sender sends it (outbox.ts: from the first event not acknowledged); when the unit's committed
 * seq is another (a resend after a lost answer), the nonce is claimed and nothing stored, and the caller
 * stores the batch with `ingestBatch` and the committed seq the claim read. The caller judges the claim
 * first, exactly as for any other request. Null when the batch cannot take this path (no such statement, an
 * armed fault point, a version event): the caller claims the nonce on its own, as for any request.
 */
export async function claimAndIngest(
  ctx: FleetContext,
  claim: { publicKey: string; nonce: string; expiresAt: number },
  unitId: string,
  events: readonly UnitEvent[],
  faults: FleetServerFaultPoints = NO_FLEET_SERVER_FAULTS,
): Promise<ClaimedIngest | null> {
  const claimIngestRun = ctx.hot?.claimIngestRun;
  if (claimIngestRun === undefined || faults.armed === true) return null;
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  const first = sorted[0];
  if (first === undefined) return null;
  const fast = fastRun(ctx, unitId, sorted, first.seq - 1);
  if (fast === null) return null;
  const c = await claimIngestRun(claim.publicKey, claim.nonce, claim.expiresAt, fast.run);
  return { unit: c.unit, fresh: c.fresh, result: c.applied ? fast.result : null };
}

/** A batch in one transaction: the unit's committed seq read (and its row locked) first. */
function ingestTransaction(
  ctx: FleetContext,
  unitId: string,
  sorted: readonly UnitEvent[],
  faults: FleetServerFaultPoints,
): Promise<IngestResult> {
  return ctx.db.transaction().execute(async (trx) => {
    let unitQuery = trx.selectFrom("units").select(["committed_seq"]).where("id", "=", unitId);
    if (ctx.dialect === "postgres") unitQuery = unitQuery.forUpdate();
    const unit = await unitQuery.executeTakeFirst();
    if (unit === undefined) throw new Error(`unit ${unitId} is not enrolled`);
    const now = ctx.clock.now();
    const { run, committed, duplicates, pastGap } = runOf(sorted, unit.committed_seq);
    let stored = 0;
    if (run.length > 0) {
      // One statement for the run; the unit's row lock (or SQLite's one writer) means none is stored yet.
      const inserted = await trx
        .insertInto("events")
        .values(
          run.map((e) => ({
            unit_id: unitId,
            seq: e.seq,
            at: e.at,
            kind: e.kind,
            data: JSON.stringify(e.data),
            received_at: now,
          })),
        )
        .onConflict((oc) => oc.columns(["unit_id", "seq"]).doNothing())
        .executeTakeFirst();
      stored = Number(inserted.numInsertedOrUpdatedRows);
      if (stored !== run.length)
        throw new Error(
          `unit ${unitId}: events past committed seq ${unit.committed_seq} were already stored`,
        );
      const sessions = latestSessions(run);
      if (sessions.length > 0) await upsertSales(trx, unitId, salesRows(ctx, sessions));
      for (const e of run) if (e.kind === "version") await applyVersion(trx, unitId, e.data, now);
      for (const e of run) if (e.kind === "dex") await storeDexRead(trx, unitId, e, now);
      await trx
        .updateTable("units")
        .set({ committed_seq: committed, last_seen_at: now })
        .where("id", "=", unitId)
        .execute();
    }
    faults.hit("fleet.ingest.stored");
    return { committed, stored, duplicates, pastGap };
  });
}

/** The latest report of each session in `run` (one sales row per session). */
function latestSessions(run: readonly UnitEvent[]): { seq: number; data: SessionData }[] {
  const sessions = new Map<string, { seq: number; data: SessionData }>();
  for (const e of run) if (e.kind === "session") sessions.set(e.data.sessionId, { seq: e.seq, data: e.data });
  return [...sessions.values()];
}

/** The sales rows of `sessions`, without their unit. */
function salesRows(
  ctx: FleetContext,
  sessions: readonly { seq: number; data: SessionData }[],
): Omit<SalesTable, "unit_id">[] {
  return sessions.map(({ seq, data: s }) => ({
    seq,
    session_id: s.sessionId,
    order_id: s.orderId,
    payment_id: s.paymentId,
    driver: s.driver,
    flow: s.flow,
    item: s.item,
    price: s.price,
    result: s.result,
    approved: s.approved,
    captured: s.captured,
    refunded: s.refunded,
    currency: s.currency,
    vends_ok: s.vends.filter((v) => v.outcome === "success").length,
    vends_failed: s.vends.filter((v) => v.outcome === "failure").length,
    opened_at: s.openedAt,
    closed_at: s.closedAt,
    day: dayOf(s.closedAt, ctx.timeZone),
    member_id: s.member?.memberId ?? null,
    plan_id: s.member?.planId ?? null,
  }));
}

/** One row per (unit, session): a later report of the same session (higher seq) replaces the row. */
async function upsertSales(
  trx: Transaction<FleetDatabase>,
  unitId: string,
  rows: readonly Omit<SalesTable, "unit_id">[],
): Promise<void> {
  await trx
    .insertInto("sales")
    .values(rows.map((r) => ({ unit_id: unitId, ...r })))
    .onConflict((oc) =>
      oc
        .columns(["unit_id", "session_id"])
        .doUpdateSet((eb) => ({
          seq: eb.ref("excluded.seq"),
          order_id: eb.ref("excluded.order_id"),
          payment_id: eb.ref("excluded.payment_id"),
          driver: eb.ref("excluded.driver"),
          flow: eb.ref("excluded.flow"),
          item: eb.ref("excluded.item"),
          price: eb.ref("excluded.price"),
          result: eb.ref("excluded.result"),
          approved: eb.ref("excluded.approved"),
          captured: eb.ref("excluded.captured"),
          refunded: eb.ref("excluded.refunded"),
          currency: eb.ref("excluded.currency"),
          vends_ok: eb.ref("excluded.vends_ok"),
          vends_failed: eb.ref("excluded.vends_failed"),
          opened_at: eb.ref("excluded.opened_at"),
          closed_at: eb.ref("excluded.closed_at"),
          day: eb.ref("excluded.day"),
          member_id: eb.ref("excluded.member_id"),
          plan_id: eb.ref("excluded.plan_id"),
        }))
        .where((eb) => eb("sales.seq", "<", eb.ref("excluded.seq"))),
    )
    .execute();
}

/** A version event: the unit's running versions, and the rollout state of the bundle that caused it. */
async function applyVersion(
  trx: Transaction<FleetDatabase>,
  unitId: string,
  v: VersionData,
  now: number,
): Promise<void> {
  if (v.outcome !== "rolledBack") {
    await trx
      .updateTable("units")
      .set(v.kind === "config" ? { config_version: v.version } : { release_version: v.version })
      .where("id", "=", unitId)
      .execute();
  }
  if (v.bundleId === null || v.outcome === "started") return;
  const bundle = await trx
    .selectFrom("bundles")
    .select(["id"])
    .where("id", "=", v.bundleId)
    .executeTakeFirst();
  if (bundle === undefined) return; // a bundle this fleet never held (applied from a USB stick): no rollout
  const state = v.outcome === "applied" ? ("applied" as const) : ("rolledBack" as const);
  await trx
    .insertInto("rollouts")
    .values({ bundle_id: v.bundleId, unit_id: unitId, state, reason: v.reason, updated_at: now })
    .onConflict((oc) =>
      oc.columns(["bundle_id", "unit_id"]).doUpdateSet({ state, reason: v.reason, updated_at: now }),
    )
    .execute();
}
