/** The JSON API: the same queries as the pages, amounts in integer minor units with their currency. */
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import { UnitParams } from "./pageRoutes.js";
import { listBundles, listUnits, overview, salesBy, unitDetail } from "./queries.js";
import { salesFilter } from "./salesRoutes.js";
import { apiError } from "./security.js";

export function registerApiRoutes(web: FastifyInstance, ctx: FleetContext): void {
  web.get("/api/v1/overview", async (_req, reply) =>
    reply.type("application/json; charset=utf-8").send(exactJson(await overview(ctx))),
  );
  web.get("/api/v1/units", async () => ({ units: await listUnits(ctx) }));
  web.get("/api/v1/units/:id", async (req, reply) => {
    const p = UnitParams.safeParse(req.params);
    const d = p.success ? await unitDetail(ctx, p.data.id) : null;
    if (d === null) return apiError(reply, 404, "not_found", "no such unit");
    return reply.type("application/json; charset=utf-8").send(exactJson(d));
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
  web.get("/api/v1/bundles", async () => ({ bundles: await listBundles(ctx) }));
}

/** JSON with every BigInt written as a plain integer (exact past 2^53). */
export function exactJson(value: unknown): string {
  const marked = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `\u0000big:${v}` : v));
  return marked.replace(/"\\u0000big:(-?\d+)"/g, "$1");
}
