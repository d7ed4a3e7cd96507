/** The sales page, its CSV export and its JSON (`/api/v1/sales`), filtered by days, unit and grouping. */
import type { FastifyInstance } from "fastify";
import { dayRefusal, rangeRefusal } from "../../core/days.js";
import type { FleetContext } from "../context.js";
import { addDays, dayOf } from "../context.js";
import { csvCell } from "../web/csv.js";
import { apiError, type DashboardTools } from "../web/index.js";
import { exactJson } from "../web/json.js";
import { messagePage, money } from "../web/pages.js";
import { type SalesGroup, salesBy, totals, unitChoices } from "./store.js";
import { salesPage } from "./views.js";

const GROUPS = ["day", "unit", "item"] as const;

/**
 * The sales filter of a query string: default the last 30 days; the range rule of every day range
 * (src/core/days.ts: days that exist, from ≤ to, at most a year). A refusal names the parameter at fault.
 */
export function salesFilter(
  ctx: FleetContext,
  query: unknown,
): { from: string; to: string; unit: string | undefined; group: SalesGroup } | { refusal: string } {
  const q = (typeof query === "object" && query !== null ? query : {}) as Record<string, unknown>;
  const text = (name: string): string | undefined | null => {
    const v = q[name];
    return v === undefined ? undefined : typeof v === "string" ? v : null;
  };
  const group = text("group");
  if (group === null || (group !== undefined && !(GROUPS as readonly string[]).includes(group)))
    return { refusal: `group: one of ${GROUPS.join(", ")}` };
  const unitText = text("unit");
  if (unitText === null || (unitText !== undefined && unitText.length > 200))
    return { refusal: "unit: a unit id (at most 200 characters)" };
  const fromText = text("from");
  const toText = text("to");
  if (fromText === null || toText === null) return { refusal: "from, to: one day each (YYYY-MM-DD)" };
  const today = dayOf(ctx.clock.now(), ctx.timeZone);
  const to = toText ?? today;
  const badTo = dayRefusal("to", to);
  if (badTo !== null) return { refusal: badTo };
  const from = fromText ?? addDays(to, -29);
  const refusal = rangeRefusal(from, to, { from: "from", to: "to" });
  if (refusal !== null) return { refusal };
  const unit = unitText === "" ? undefined : unitText;
  return { from, to, unit, group: (group ?? "day") as SalesGroup };
}

export function mountSalesPages(web: FastifyInstance, ctx: FleetContext, t: DashboardTools): void {
  const { sendHtml, pageContext: pc } = t;

  web.get("/sales", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if ("refusal" in f) return sendHtml(reply, messagePage("Bad request", f.refusal), 400);
    return sendHtml(
      reply,
      salesPage(pc(req), {
        ...f,
        units: await unitChoices(ctx),
        byDay: await salesBy(ctx, f, "day"),
        byUnit: await salesBy(ctx, f, "unit"),
        byItem: await salesBy(ctx, f, "item"),
        totals: await totals(ctx, f),
      }),
    );
  });

  web.get("/sales.csv", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if ("refusal" in f) return reply.code(400).type("text/plain").send(`${f.refusal}\n`);
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

  web.get("/api/v1/sales", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if ("refusal" in f) return apiError(reply, 400, "bad_request", f.refusal);
    const body = {
      from: f.from,
      to: f.to,
      unit: f.unit ?? null,
      group: f.group,
      rows: await salesBy(ctx, f, f.group),
    };
    // Money as exact JSON integers (issue 30): BigInt written as its digits, never through a double.
    return reply.type("application/json; charset=utf-8").send(exactJson(body));
  });
}
