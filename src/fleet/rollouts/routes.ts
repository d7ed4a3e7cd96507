/**
 * The rollouts pages (`/rollouts`, `/rollouts/:bundle`) and JSON (`/api/v1/rollouts[/:bundle]`), read by
 * every role; pause, resume and abort by managers (the dashboard's CSRF and role checks).
 */
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import { changeRollout, listRollouts, type RolloutAction, RolloutError, rolloutStatus } from "./store.js";
import { rolloutPage, rolloutsPage } from "./views.js";

export function mountRolloutPages(web: FastifyInstance, ctx: FleetContext, t: DashboardTools): void {
  const { sendHtml, pageContext: pc } = t;
  web.get("/rollouts", async (req, reply) => sendHtml(reply, rolloutsPage(pc(req), await listRollouts(ctx))));
  web.get("/api/v1/rollouts", async () => ({ rollouts: await listRollouts(ctx) }));
  web.get<{ Params: { bundle: string } }>("/rollouts/:bundle", async (req, reply) => {
    const r = await rolloutStatus(ctx, req.params.bundle);
    if (r === null) return sendHtml(reply, messagePage("Not found", "No such rollout."), 404);
    return sendHtml(reply, rolloutPage(pc(req), r));
  });
  web.get<{ Params: { bundle: string } }>("/api/v1/rollouts/:bundle", async (req, reply) => {
    const r = await rolloutStatus(ctx, req.params.bundle);
    return r === null ? reply.code(404).send({ error: "no such rollout" }) : r;
  });
  for (const action of ["pause", "resume", "abort"] as const satisfies readonly RolloutAction[]) {
    web.post<{ Params: { bundle: string } }>(
      `/rollouts/:bundle/${action}`,
      { preHandler: t.managerOnly },
      async (req, reply) => {
        try {
          await changeRollout(ctx, req.params.bundle, action, t.session(req).username);
        } catch (e) {
          if (e instanceof RolloutError) return sendHtml(reply, messagePage("Refused", e.message), 409);
          throw e;
        }
        return reply.redirect(`/rollouts/${encodeURIComponent(req.params.bundle)}`, 303);
      },
    );
  }
}
