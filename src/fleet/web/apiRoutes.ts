/** The JSON API: the same queries as the pages, amounts in integer minor units with their currency. */
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import { UnitParams } from "./pageRoutes.js";
import { listBundles, listUnits, overview, salesBy, unitDetail } from "./queries.js";
import { salesFilter } from "./salesRoutes.js";
import { apiError } from "./security.js";

export function registerApiRoutes(web: FastifyInstance, ctx: FleetContext): void {
  web.get("/api/v1/overview", async () => overview(ctx));
  web.get("/api/v1/units", async () => ({ units: await listUnits(ctx) }));
  web.get("/api/v1/units/:id", async (req, reply) => {
    const p = UnitParams.safeParse(req.params);
    const d = p.success ? await unitDetail(ctx, p.data.id) : null;
    if (d === null) return apiError(reply, 404, "not_found", "no such unit");
    return d;
  });
  web.get("/api/v1/sales", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if (f === null)
      return apiError(
        reply,
        400,
        "bad_request",
        "from and to are days (YYYY-MM-DD), from <= to, at most a year apart",
      );
    return {
      from: f.from,
      to: f.to,
      unit: f.unit ?? null,
      group: f.group,
      rows: await salesBy(ctx, f, f.group),
    };
  });
  web.get("/api/v1/bundles", async () => ({ bundles: await listBundles(ctx) }));
}
