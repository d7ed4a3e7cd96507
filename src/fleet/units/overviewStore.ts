/**
 * The dashboard's overview: unit counts, units offline or needing a look, pending approvals, today's and
 * this week's totals, bundles and the chart.
 */

import { alertCounts, alertsDb } from "../alerts/index.js";
import { listBundles } from "../bundles/index.js";
import type { FleetContext } from "../context.js";
import { dayOf, weekStart } from "../context.js";
import { dailySeries, totals } from "../sales/index.js";
import type { Overview } from "./rows.js";
import { listUnits } from "./store.js";

export type { Overview };

export async function overview(ctx: FleetContext, chartDays = 14): Promise<Overview> {
  const now = ctx.clock.now();
  const today = dayOf(now, ctx.timeZone);
  const weekFrom = weekStart(today);
  const units = await listUnits(ctx);
  const approved = units.filter((u) => u.status === "approved");
  const bundles = await listBundles(ctx);
  return {
    now,
    today,
    weekFrom,
    units: {
      total: units.length,
      online: approved.filter((u) => u.online).length,
      offline: approved.filter((u) => !u.online && !u.stopped).length,
      stopped: approved.filter((u) => u.stopped).length,
      pending: units.filter((u) => u.status === "pending").length,
      revoked: units.filter((u) => u.status === "revoked").length,
    },
    // A unit that said it was stopping is stopped, not offline.
    offline: approved.filter((u) => !u.online && !u.stopped),
    attention: approved.filter((u) => u.attention.length > 0),
    pending: units.filter((u) => u.status === "pending"),
    todayTotals: await totals(ctx, { from: today, to: today }),
    weekTotals: await totals(ctx, { from: weekFrom, to: today }),
    bundles: bundles.map((b) => ({ ...b, rollouts: [] })),
    chart: await dailySeries(ctx, chartDays),
    alerts: await alertCounts(alertsDb(ctx)),
  };
}
