/**
 * The fleet-level figures `/metrics` serves (issue 45), each one query over the whole fleet: units by state,
 * the last minute's vends and amounts by currency, open alerts, failing deliveries and rollout states. No
 * figure is per unit or per sale.
 */
import type { FleetContext } from "../context.js";
import { dayOf } from "../context.js";

/** The last minute's delivered vends and, per currency, what was captured less what was refunded. */
export interface LastMinute {
  vends: number;
  amounts: Map<string, number>;
}

/**
 * Sessions closed in the 60 s before `now`: vends delivered and the net amount per currency (minor units).
 * Only today's and yesterday's days in the fleet's zone are read (the `sales_day` index).
 */
export async function lastMinuteSales(ctx: FleetContext, now: number): Promise<LastMinute> {
  const from = now - 60_000;
  const days = [...new Set([dayOf(from, ctx.timeZone), dayOf(now, ctx.timeZone)])];
  const rows = await ctx.db
    .selectFrom("sales")
    .select((eb) => [
      "currency",
      eb.fn.sum<number | string | bigint>("vends_ok").as("vends"),
      eb.fn.sum<number | string | bigint>(eb("captured", "-", eb.ref("refunded"))).as("net"),
    ])
    .where("day", "in", days)
    .where("closed_at", ">", from)
    .where("closed_at", "<=", now)
    .groupBy("currency")
    .execute();
  const amounts = new Map<string, number>();
  let vends = 0;
  for (const r of rows) {
    vends += Number(r.vends ?? 0);
    amounts.set(r.currency, Number(r.net ?? 0));
  }
  return { vends, amounts };
}

/** Rollout rows (one per unit and bundle) by state. */
export async function rolloutStates(ctx: FleetContext): Promise<Map<string, number>> {
  const rows = await ctx.db
    .selectFrom("rollouts")
    .select((eb) => ["state", eb.fn.countAll<number | string | bigint>().as("n")])
    .groupBy("state")
    .execute();
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}
