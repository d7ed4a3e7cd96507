/** The sales page and its CSV export, filtered by days, unit and grouping. */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import { dayOf } from "../context.js";
import { csvCell } from "./csv.js";
import type { DashboardScope } from "./options.js";
import { messagePage, money, salesPage } from "./pages.js";
import { addDays, isDay, listUnits, type SalesGroup, salesBy, totals } from "./queries.js";

const Day = z.string().refine(isDay, "a day is YYYY-MM-DD");
const SalesQuery = z.object({
  from: Day.optional(),
  to: Day.optional(),
  unit: z.string().max(200).optional(),
  group: z.enum(["day", "unit", "item"]).optional(),
});

/** The sales filter of a query string: default the last 30 days, to ≥ from, at most 366 days. */
export function salesFilter(ctx: FleetContext, query: unknown) {
  const q = SalesQuery.safeParse(query);
  if (!q.success) return null;
  const today = dayOf(ctx.clock.now(), ctx.timeZone);
  const to = q.data.to ?? today;
  const from = q.data.from ?? addDays(to, -29);
  if (from > to || addDays(from, 366) < to) return null;
  const unit = q.data.unit === "" ? undefined : q.data.unit;
  return { from, to, unit, group: (q.data.group ?? "day") as SalesGroup };
}

export function registerSalesRoutes(web: FastifyInstance, scope: DashboardScope): void {
  const { ctx, sendHtml, pageContext: pc } = scope;

  web.get("/sales", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if (f === null)
      return sendHtml(
        reply,
        messagePage("Bad request", "from and to are days (YYYY-MM-DD), from ≤ to, at most a year apart."),
        400,
      );
    return sendHtml(
      reply,
      salesPage(pc(req), {
        ...f,
        units: await listUnits(ctx),
        byDay: await salesBy(ctx, f, "day"),
        byUnit: await salesBy(ctx, f, "unit"),
        byItem: await salesBy(ctx, f, "item"),
        totals: await totals(ctx, f),
      }),
    );
  });

  web.get("/sales.csv", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if (f === null)
      return reply.code(400).type("text/plain").send("from and to are days (YYYY-MM-DD), from <= to\n");
    const rows = await salesBy(ctx, f, f.group);
    const lines = [
      [
        f.group,
        "currency",
        "sessions",
        "sales",
        "captured",
        "refunded",
        "net",
        "vends_ok",
        "vends_failed",
      ].join(","),
      ...rows.map((r) =>
        [
          csvCell(r.key),
          csvCell(r.currency),
          r.sessions,
          r.sales,
          money(r.captured, r.currency),
          money(r.refunded, r.currency),
          money(r.net, r.currency),
          r.vendsOk,
          r.vendsFailed,
        ].join(","),
      ),
    ];
    const name = `sales-${f.group}-${f.from}-${f.to}.csv`;
    return reply
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="${name}"`)
      .send(`${lines.join("\r\n")}\r\n`);
  });
}
