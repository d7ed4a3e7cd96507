/**
 * The units' dashboard pages (the overview, the units list, one unit), their JSON (`/api/v1/overview`,
 * `/api/v1/units`, `/api/v1/units/:id`), and the managers' approve/revoke decisions on units.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import { apiError, type DashboardTools } from "../web/index.js";
import { exactJson } from "../web/json.js";
import { messagePage } from "../web/pages.js";
import { unitDetail } from "./detailStore.js";
import { overview } from "./overviewStore.js";
import { approveUnit, listUnits, revokeUnit } from "./store.js";
import { overviewPage, unitPage, unitsPage } from "./views.js";

export const UnitParams = z.object({ id: z.string().min(1).max(200) });

export function mountUnitPages(web: FastifyInstance, ctx: FleetContext, t: DashboardTools): void {
  const { sendHtml, session, pageContext: pc } = t;

  const decide = (action: "approve" | "revoke") => async (req: FastifyRequest, reply: FastifyReply) => {
    const s = session(req);
    if (s.role !== "manager")
      return sendHtml(reply, messagePage("Refused", "Only a manager approves or revokes units."), 403);
    const p = UnitParams.safeParse(req.params);
    if (!p.success) return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
    const result =
      action === "approve"
        ? await approveUnit(ctx, p.data.id, s.username)
        : await revokeUnit(ctx, p.data.id, s.username);
    if (result === "notFound") return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
    if (result === "alreadyRevoked")
      return sendHtml(
        reply,
        messagePage("Already revoked", "This unit is revoked; it cannot be approved again."),
        409,
      );
    return reply.redirect(`/units/${encodeURIComponent(p.data.id)}`, 303);
  };
  web.post("/units/:id/approve", decide("approve"));
  web.post("/units/:id/revoke", decide("revoke"));

  // Pages.
  web.get("/", async (req, reply) => sendHtml(reply, overviewPage(pc(req), await overview(ctx))));
  web.get("/units", async (req, reply) => sendHtml(reply, unitsPage(pc(req), await listUnits(ctx))));
  web.get("/units/:id", async (req, reply) => {
    const p = UnitParams.safeParse(req.params);
    const d = p.success ? await unitDetail(ctx, p.data.id) : null;
    if (d === null) return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
    return sendHtml(reply, unitPage(pc(req), d));
  });

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
}
