/** The DEX audits page and its CSV on the composed fleet server (issue 36). */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { DAY_MS, isDay } from "../../core/days.js";
import { dayOf, type FleetContext } from "../context.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import type { PageTools } from "../web/pageTools.js";
import { loadDexReport } from "./load.js";
import { dexCsv, dexRows } from "./output.js";
import { renderDexPage } from "./views.js";

const Period = z.object({ from: z.string().optional(), to: z.string().optional() });

/** The period asked for (default: yesterday and today in the fleet's time zone), or null when it is bad. */
function period(ctx: FleetContext, query: unknown): { from: string; to: string } | null {
  const q = Period.safeParse(query);
  if (!q.success) return null;
  const today = dayOf(ctx.clock.now(), ctx.timeZone);
  const from = q.data.from ?? dayOf(ctx.clock.now() - DAY_MS, ctx.timeZone);
  const to = q.data.to ?? today;
  if (!isDay(from) || !isDay(to) || to < from || Date.parse(to) - Date.parse(from) > 366 * DAY_MS)
    return null;
  return { from, to };
}

export function mountDexPages(
  web: FastifyInstance,
  ctx: FleetContext,
  t: DashboardTools,
  p: PageTools,
): void {
  const bad = "from and to are days YYYY-MM-DD, from <= to, at most a year apart.";
  web.get("/dex", async (req, reply) => {
    const r = period(ctx, req.query);
    if (r === null) return t.sendHtml(reply, messagePage("Bad request", bad), 400);
    const report = await loadDexReport(ctx.db, { ...r, timeZone: ctx.timeZone });
    return p.page(req, reply, "/dex", "DEX audits", renderDexPage(report));
  });
  web.get("/dex.csv", async (req, reply) => {
    const r = period(ctx, req.query);
    if (r === null) return t.sendHtml(reply, messagePage("Bad request", bad), 400);
    const report = await loadDexReport(ctx.db, { ...r, timeZone: ctx.timeZone });
    return reply
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="dex-${r.from}-${r.to}.csv"`)
      .send(dexCsv(dexRows(report)));
  });
}
