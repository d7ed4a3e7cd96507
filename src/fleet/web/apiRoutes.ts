/** The JSON API: the same queries as the pages, amounts in integer minor units with their currency. */
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import { UnitParams } from "./pageRoutes.js";
import { listBundles, listUnits, overview, salesBy, unitDetail } from "./queries.js";
import { salesFilter } from "./salesRoutes.js";

export function registerApiRoutes(web: FastifyInstance, ctx: FleetContext): void {
  web.get("/api/v1/overview", async () => overview(ctx));
  web.get("/api/v1/units", async () => ({ units: await listUnits(ctx) }));
  web.get("/api/v1/units/:id", async (req, reply) => {
    const p = UnitParams.safeParse(req.params);
    const d = p.success ? await unitDetail(ctx, p.data.id) : null;
    if (d === null) return reply.code(404).send({ error: "no such unit" });
    return d;
  });
  web.get("/api/v1/sales", async (req, reply) => {
    const f = salesFilter(ctx, req.query);
    if ("refusal" in f) return reply.code(400).send({ error: f.refusal });
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
