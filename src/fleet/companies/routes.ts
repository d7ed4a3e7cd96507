/** The company set-up pages and forms of the composed fleet server (issue 18). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { FleetContext } from "../context.js";
import { loadCompanies, renderCompanies } from "../invoices/index.js";
import type { PlansOptions } from "../plans/index.js";
import { html } from "../web/html.js";
import type { DashboardTools } from "../web/index.js";
import { IdParams, type PageTools } from "../web/pageTools.js";
import {
  addMemberFromForm,
  assignUnitFromForm,
  createCompanyFromForm,
  FormError,
  setProductFromForm,
} from "./forms.js";
import { loadCompanyFormData } from "./store.js";
import { renderCompanyForms } from "./views.js";

export function mountCompanyPages(
  web: FastifyInstance,
  ctx: FleetContext,
  s: { plans?: PlansOptions | undefined },
  t: DashboardTools,
  p: PageTools,
): void {
  const { page, notFound } = p;
  const plans = s.plans;
  // Company set-up (issue 18): managers see the forms; each POST answers 303 back, or the page with the
  // refusal (422, nothing stored).
  const companiesPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    error: string | null,
    status = 200,
  ) => {
    const sess = t.session(req);
    const companies = await loadCompanies(ctx);
    const forms =
      sess.role === "manager"
        ? renderCompanyForms(
            companies,
            await loadCompanyFormData(ctx, s.plans !== undefined),
            sess.csrf,
            error,
          )
        : "";
    return page(req, reply, "/companies", "Companies", html`${renderCompanies(companies)}${forms}`, status);
  };
  web.get("/companies", async (req, reply) => companiesPage(req, reply, null));
  const companyForm =
    (act: (req: FastifyRequest) => Promise<void>) => async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        await act(req);
      } catch (e) {
        if (!(e instanceof FormError)) throw e;
        if (e.status === 404) return notFound(reply, "No such company.");
        return companiesPage(req, reply, e.message, e.status);
      }
      return reply.redirect("/companies", 303);
    };
  const companyId = (req: FastifyRequest): string => {
    const p = IdParams.safeParse(req.params);
    if (!p.success) throw new FormError("no such company", 404);
    return p.data.id;
  };
  web.post(
    "/companies",
    { preHandler: t.managerOnly },
    companyForm(async (req) => {
      const id = await createCompanyFromForm(ctx, req.body);
      ctx.logger.info({ company: id, by: t.session(req).username }, "company created");
    }),
  );
  web.post(
    "/companies/:id/units",
    { preHandler: t.managerOnly },
    companyForm(async (req) => {
      const id = companyId(req);
      await assignUnitFromForm(ctx, id, req.body);
      ctx.logger.info({ company: id, by: t.session(req).username }, "unit assigned to a company");
    }),
  );
  web.post(
    "/companies/:id/products",
    { preHandler: t.managerOnly },
    companyForm(async (req) => {
      const id = companyId(req);
      await setProductFromForm(ctx, id, req.body);
      ctx.logger.info({ company: id, by: t.session(req).username }, "catalogue product set");
    }),
  );
  if (plans !== undefined)
    web.post(
      "/companies/:id/members",
      { preHandler: t.managerOnly },
      companyForm(async (req) => {
        await addMemberFromForm(ctx, plans.settings, companyId(req), req.body);
      }),
    );
}
