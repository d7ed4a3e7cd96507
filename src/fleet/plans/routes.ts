/**
 * The member plan pages of the composed fleet server (issue 18): plans, members, usage; managers create and
 * edit plans with the form on /plans (issue 43, planForm.ts): a refusal shows the page again with the
 * error and what was typed (422), nothing stored.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import { html } from "../web/html.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import { IdParams, type PageTools } from "../web/pageTools.js";
import { registerPlanAdmin } from "./admin.js";
import { createPlan, editPlan } from "./agreements.js";
import { periodOf } from "./common.js";
import type { PlansOptions } from "./options.js";
import { usageReport } from "./overage.js";
import {
  NEW_PLAN,
  PlanFormError,
  type PlanFormValues,
  planForm,
  planFormValues,
  planFormValuesOf,
  planInputOf,
} from "./planForm.js";
import { listMembers, listPlans, loadMemberDetail, planById } from "./store/plans.js";
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
    // The plans, and for a manager the new-plan form (issue 43); a refused form comes back with its error.
    const plansList = async (
      req: FastifyRequest,
      reply: FastifyReply,
      form: { values: PlanFormValues; error: string | null } = { values: NEW_PLAN, error: null },
      status = 200,
    ) => {
      const sess = t.session(req);
      const manager = sess.role === "manager";
      const body = html`${plansPage(await listPlans(ctx), plans.settings.publicUrl, manager)}${
        manager
          ? planForm(
              {
                action: "/plans/admin/plans",
                csrf: sess.csrf,
                heading: "New plan",
                submit: "Create plan",
                editing: false,
              },
              form.values,
              form.error,
            )
          : ""
      }`;
      return page(req, reply, "/plans", "Plans", body, status);
    };
    const editPage = async (
      req: FastifyRequest,
      reply: FastifyReply,
      id: string,
      form: { values: PlanFormValues; error: string | null } | null,
      status = 200,
    ) => {
      const plan = await planById(ctx, id);
      if (plan === undefined) return notFound(reply, "No such plan.");
      const f = form ?? { values: planFormValuesOf(plan), error: null };
      const body = planForm(
        {
          action: `/plans/admin/plans/${encodeURIComponent(id)}`,
          csrf: t.session(req).csrf,
          heading: `Edit plan ${plan.name}`,
          submit: "Save plan",
          editing: true,
        },
        { ...f.values, currency: plan.currency },
        f.error,
      );
      return page(
        req,
        reply,
        "/plans",
        "Edit plan",
        html`<h1>Edit plan</h1>${body}<p><a href="/plans">Back to the plans</a></p>`,
        status,
      );
    };
    web.get("/plans", async (req, reply) => plansList(req, reply));
    web.post("/plans/admin/plans", { preHandler: t.managerOnly }, async (req, reply) => {
      const values = planFormValues(req.body);
      let id: string;
      try {
        id = await createPlan(ctx, planInputOf(values));
      } catch (e) {
        if (!(e instanceof PlanFormError)) throw e;
        return plansList(req, reply, { values, error: e.message }, 422);
      }
      ctx.logger.info({ plan: id, by: t.session(req).username }, "plan created");
      return reply.redirect("/plans", 303);
    });
    web.get("/plans/:id/edit", { preHandler: t.managerOnly }, async (req, reply) => {
      const p = IdParams.safeParse(req.params);
      if (!p.success) return notFound(reply, "No such plan.");
      return editPage(req, reply, p.data.id, null);
    });
    web.post("/plans/admin/plans/:id", { preHandler: t.managerOnly }, async (req, reply) => {
      const p = IdParams.safeParse(req.params);
      if (!p.success) return notFound(reply, "No such plan.");
      const values = planFormValues(req.body);
      try {
        const plan = await planById(ctx, p.data.id);
        if (plan === undefined) return notFound(reply, "No such plan.");
        await editPlan(ctx, p.data.id, planInputOf({ ...values, currency: plan.currency }));
      } catch (e) {
        if (!(e instanceof PlanFormError)) throw e;
        return editPage(req, reply, p.data.id, { values, error: e.message }, 422);
      }
      ctx.logger.info({ plan: p.data.id, by: t.session(req).username }, "plan edited");
      return reply.redirect("/plans", 303);
    });
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
