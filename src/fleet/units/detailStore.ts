/**
 * One unit's detail page data: its summary and last heartbeat, 30-day chart and totals, recent vends,
 * faults, version events and bundles.
 */

import { listBundles } from "../bundles/index.js";
import type { FleetContext } from "../context.js";
import { g85Mark, lastReadOf } from "../dex/index.js";
import { dailySeries, totals } from "../sales/index.js";
import type { UnitDetail, UnitEventRow, Vend } from "./rows.js";
import { listUnits } from "./store.js";

export type { UnitDetail, UnitEventRow, Vend };

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function eventsOf(
  ctx: FleetContext,
  unit: string,
  kind: "fault" | "version",
  limit: number,
): Promise<UnitEventRow[]> {
  const rows = await ctx.db
    .selectFrom("events")
    .select(["seq", "at", "kind", "data"])
    .where("unit_id", "=", unit)
    .where("kind", "=", kind)
    .orderBy("seq", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), at: Number(r.at), kind: r.kind, data: parseJson(r.data) }));
}

/** The unit's latest DEX read and its machine's G85 mark, or null without either. */
async function dexOf(ctx: FleetContext, id: string): Promise<UnitDetail["dex"]> {
  const read = await lastReadOf(ctx.db, id);
  const mark = await g85Mark(ctx.db, id);
  if (read === null && mark === null) return null;
  return {
    lastRead:
      read === null
        ? null
        : { readId: read.read_id, at: Number(read.at), outcome: read.outcome, g85: read.g85 },
    g85Mark: mark === null ? null : { by: mark.marked_by, reason: mark.reason, at: Number(mark.marked_at) },
  };
}

export async function unitDetail(ctx: FleetContext, id: string): Promise<UnitDetail | null> {
  const unit = (await listUnits(ctx)).find((u) => u.id === id);
  if (unit === undefined) return null;
  const hb = await ctx.db
    .selectFrom("units")
    .select("last_heartbeat")
    .where("id", "=", id)
    .executeTakeFirst();
  const chart = await dailySeries(ctx, 30, id);
  const vends = await ctx.db
    .selectFrom("sales")
    .select([
      "session_id",
      "order_id",
      "payment_id",
      "item",
      "price",
      "result",
      "captured",
      "refunded",
      "currency",
      "vends_ok",
      "vends_failed",
      "closed_at",
    ])
    .where("unit_id", "=", id)
    .orderBy("closed_at", "desc")
    .limit(25)
    .execute();
  return {
    unit,
    heartbeat: parseJson(hb?.last_heartbeat ?? null),
    chart,
    totals30: await totals(ctx, { from: chart.days[0] ?? "", to: chart.days.at(-1) ?? "", unit: id }),
    recentVends: vends.map((v) => ({
      sessionId: v.session_id,
      orderId: v.order_id,
      paymentId: v.payment_id,
      item: Number(v.item),
      price: Number(v.price),
      result: v.result,
      captured: Number(v.captured),
      refunded: Number(v.refunded),
      currency: v.currency,
      vendsOk: Number(v.vends_ok),
      vendsFailed: Number(v.vends_failed),
      closedAt: Number(v.closed_at),
    })),
    faults: await eventsOf(ctx, id, "fault", 25),
    versions: await eventsOf(ctx, id, "version", 10),
    bundles: await listBundles(ctx, id),
    dex: await dexOf(ctx, id),
  };
}
