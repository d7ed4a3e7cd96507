/** The member plan pages of the composed fleet server (issue 18). */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import { html } from "../web/html.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import { IdParams, type PageTools } from "../web/pageTools.js";
import { registerPlanAdmin } from "./admin.js";
import { periodOf } from "./common.js";
import type { PlansOptions } from "./options.js";
import { usageReport } from "./overage.js";
import { listMembers, listPlans, loadMemberDetail } from "./store/plans.js";
import { memberPage as memberPageOf, membersPage, plansPage, usagePage } from "./views.js";

const UsageQuery = z.object({
  period: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
    .optional(),
});

export async function mountPlanPages(
  web: FastifyInstance,
  ctx: FleetContext,
  s: { plans?: PlansOptions | undefined },
  t: DashboardTools,
  p: PageTools,
): Promise<void> {
  const { page, notFound } = p;
  // Member plans (issue 18): pages for everyone logged in, forms for managers.
  const plans = s.plans;
  if (plans !== undefined) {
    web.get("/plans", async (req, reply) =>
      page(req, reply, "/plans", "Plans", plansPage(await listPlans(ctx), plans.settings.publicUrl)),
    );
    web.get("/plans/members", async (req, reply) =>
      page(req, reply, "/plans/members", "Members", membersPage(await listMembers(ctx))),
    );
    web.get("/plans/members/:id", async (req, reply) => {
      const p = IdParams.safeParse(req.params);
      const d = p.success ? await loadMemberDetail(ctx, p.data.id) : undefined;
      if (d === undefined) return notFound(reply, "No such member.");
      // Viewers see the same page; the forms it holds are refused to them (manager-only POSTs).
      return page(req, reply, "/plans/members", "Member", html`${memberPageOf(d, t.session(req).csrf)}`);
    });
    web.get("/plans/usage", async (req, reply) => {
      const q = UsageQuery.safeParse(req.query);
      if (!q.success) return t.sendHtml(reply, messagePage("Bad request", "period is YYYY-MM."), 400);
      const period = q.data.period ?? periodOf(ctx.clock.now(), ctx.timeZone);
      return page(req, reply, "/plans/usage", "Usage", usagePage(period, await usageReport(ctx, period)));
    });
    await registerPlanAdmin(web, ctx, plans, t.managerOnly, (req) => t.session(req).username);
  }
}
