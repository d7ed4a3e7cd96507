/** The groups page (`/groups`) and its JSON (`/api/v1/groups`), read by every dashboard role. */
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import type { DashboardTools } from "../web/index.js";
import { listGroups } from "./store.js";
import { groupsPage } from "./views.js";

export function mountGroupPages(web: FastifyInstance, ctx: FleetContext, t: DashboardTools): void {
  web.get("/groups", async (req, reply) =>
    t.sendHtml(reply, groupsPage(t.pageContext(req), await listGroups(ctx.db))),
  );
  web.get("/api/v1/groups", async () => ({ groups: await listGroups(ctx.db) }));
}
