/** The unit and bundle pages, and the managers' approve/revoke decisions on units. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { approveUnit, revokeUnit } from "../units/index.js";
import type { DashboardScope } from "./options.js";
import { bundlesPage, messagePage, overviewPage, unitPage, unitsPage } from "./pages.js";
import { listBundles, listUnits, overview, unitDetail } from "./queries.js";

export const UnitParams = z.object({ id: z.string().min(1).max(200) });

export function registerPageRoutes(web: FastifyInstance, scope: DashboardScope): void {
  const { ctx, sendHtml, session, pageContext: pc } = scope;

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

  web.get("/bundles", async (req, reply) => sendHtml(reply, bundlesPage(pc(req), await listBundles(ctx))));
}
