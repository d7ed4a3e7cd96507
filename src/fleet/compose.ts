/**
 * The whole fleet server as `vendd fleet serve` runs it: the unit API, the dashboard, and — when their
 * config sections are present — reconciliation pages, member plans (public sign-up, the service's
 * callbacks, manager forms, the units' entitlement list), company invoices (callbacks, pages, cancel), the
 * managers' company set-up forms (src/fleet/invoices/forms.ts) and the bundle upload form, all pages inside
 * the dashboard's layout, login, CSRF and role checks. The scheduled jobs (nightly reconciliation, plan
 * cycle, monthly invoices) are started by `startFleetJobs`.
 */
import fastifyMultipart from "@fastify/multipart";
import { Cron } from "croner";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { InvoicesClient } from "../payment/invoices/client.js";
import type { SubscriptionsClient } from "../payment/subscriptions/client.js";
import { BundleUploadError, storeBundle } from "./bundles.js";
import type { FleetConfig } from "./config.js";
import { dayOf, type FleetContext } from "./context.js";
import { registerInvoices } from "./invoices/callbacks.js";
import { runInvoiceCycle } from "./invoices/cycle.js";
import {
  addMemberFromForm,
  assignUnitFromForm,
  createCompanyFromForm,
  FormError,
  loadCompanyFormData,
  renderCompanyForms,
  setProductFromForm,
} from "./invoices/forms.js";
import {
  loadCompanies,
  loadInvoice,
  loadInvoices,
  renderCompanies,
  renderInvoice,
  renderInvoices,
} from "./invoices/pages.js";
import { applyRemoteStatus, invoicesDb } from "./invoices/store.js";
import { previousMonth, withJobLock } from "./jobs.js";
import {
  listMembers,
  listPlans,
  loadMemberDetail,
  membersPage,
  type PlansSettings,
  periodOf,
  plansPage,
  plansPublisher,
  registerEntitlementRoute,
  registerPlanAdmin,
  registerPlans,
  runPlanCycle,
  usagePage,
  usageReport,
} from "./plans/index.js";
import { memberPage as memberPageOf } from "./plans/pages.js";
import { startNightlyReconcile } from "./reconcile/nightly.js";
import {
  getRun,
  listRuns,
  renderLinesPage,
  renderRunPage,
  renderRunsPage,
  runDays,
  runLines,
  runUnits,
} from "./reconcile/page.js";
import type { ReportingSettings } from "./reconcile/settings.js";
import type { FleetPlugin } from "./server.js";
import { sessionOf } from "./web/accounts.js";
import { type Html, html } from "./web/html.js";
import { type DashboardTools, registerDashboard, SESSION_COOKIE, sameOrigin } from "./web/index.js";
import { layout, messagePage } from "./web/pages.js";

/** What the optional sections need at run time (built from the config by the CLI, or given by tests). */
export interface FleetServices {
  /** Reporting settings (or a loader called at each run) when `reporting` is configured. */
  reporting?: ReportingSettings | (() => ReportingSettings);
  plans?: { client: SubscriptionsClient; settings: PlansSettings };
  invoices?: { client: InvoicesClient; auth: FleetInvoiceAuth };
}
export type FleetInvoiceAuth = NonNullable<FleetConfig["invoices"]>["callbackAuth"];

const RunParams = z.object({ runId: z.coerce.number().int().positive() });
const LinesQuery = z.object({
  day: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
  unit: z.string().min(1).max(200).optional(),
  all: z.literal("1").optional(),
});
const IdParams = z.object({ id: z.string().min(1).max(200) });
const UsageQuery = z.object({
  period: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
    .optional(),
});
const InvoiceStatus = z.object({
  status: z.enum(["draft", "sent", "paid", "unpaid", "overdue", "cancelled"]).optional(),
});

/** The largest bundle the upload form takes (the form's multipart body). */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/** Nav entries for the sections configured, in the dashboard's order. */
export function fleetNav(s: FleetServices): [string, string][] {
  const nav: [string, string][] = [["/reconcile", "Reconciliation"]];
  if (s.plans !== undefined)
    nav.push(["/plans", "Plans"], ["/plans/members", "Members"], ["/plans/usage", "Usage"]);
  nav.push(["/companies", "Companies"], ["/invoices", "Invoices"]);
  return nav;
}

function bundleForm(csrf: string, message: Html | string = ""): Html {
  return html`<section class="upload"><h2>Upload a bundle</h2>${message}
<form method="post" action="/bundles/upload" enctype="multipart/form-data">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Signed bundle <input type="file" name="bundle" required></label>
<button type="submit">Upload</button></form></section>`;
}

async function mountPages(
  web: FastifyInstance,
  ctx: FleetContext,
  s: FleetServices,
  t: DashboardTools,
): Promise<void> {
  const page = (
    req: FastifyRequest,
    reply: FastifyReply,
    path: string,
    title: string,
    body: Html,
    status = 200,
  ) => t.sendHtml(reply, layout(t.pageContext(req), path, title, body, true), status);
  const notFound = (reply: FastifyReply, what: string) =>
    t.sendHtml(reply, messagePage("Not found", what), 404);

  // Reconciliation (issue 17): runs stored by the nightly job or `vendd fleet reconcile`.
  web.get("/reconcile", async (req, reply) =>
    page(req, reply, "/reconcile", "Reconciliation", renderRunsPage(await listRuns(ctx.db))),
  );
  web.get("/reconcile/:runId", async (req, reply) => {
    const p = RunParams.safeParse(req.params);
    const run = p.success ? await getRun(ctx.db, p.data.runId) : null;
    if (run === null) return notFound(reply, "No such reconciliation run.");
    return page(req, reply, "/reconcile", "Reconciliation", renderRunPage(run, await runDays(ctx.db, run)));
  });
  web.get("/reconcile/:runId/lines", async (req, reply) => {
    const p = RunParams.safeParse(req.params);
    const q = LinesQuery.safeParse(req.query);
    if (!q.success)
      return t.sendHtml(reply, messagePage("Bad request", "day is YYYY-MM-DD; unit a unit id."), 400);
    const run = p.success ? await getRun(ctx.db, p.data.runId) : null;
    if (run === null) return notFound(reply, "No such reconciliation run.");
    const filter = {
      ...(q.data.day === undefined ? {} : { day: q.data.day }),
      ...(q.data.unit === undefined ? {} : { unit: q.data.unit }),
      all: q.data.all === "1",
    };
    const lines = await runLines(ctx.db, run.id, filter);
    const units = await runUnits(ctx.db, run.id, filter.day);
    return page(req, reply, "/reconcile", "Reconciliation", renderLinesPage(run, lines, units, filter));
  });

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
  // Company invoices (issue 18): pages, and cancel for managers when the invoice client is configured.
  web.get("/invoices", async (req, reply) => {
    const q = InvoiceStatus.safeParse(req.query);
    if (!q.success) return t.sendHtml(reply, messagePage("Bad request", "Unknown invoice status."), 400);
    const rows = await loadInvoices(ctx, q.data.status === undefined ? {} : { status: q.data.status });
    return page(req, reply, "/invoices", "Invoices", renderInvoices(rows));
  });
  web.get("/invoices/:id", async (req, reply) => {
    const p = IdParams.safeParse(req.params);
    const found = p.success ? await loadInvoice(ctx, p.data.id) : null;
    if (found === null) return notFound(reply, "No such invoice.");
    const sess = t.session(req);
    const inv = found.invoice;
    const cancellable =
      s.invoices !== undefined &&
      sess.role === "manager" &&
      inv.remote_id !== null &&
      (inv.status === "sent" || inv.status === "overdue");
    const form = cancellable
      ? html`<form method="post" action="${`/invoices/${encodeURIComponent(inv.id)}/cancel`}"><input type="hidden" name="_csrf" value="${sess.csrf}"><button type="submit">Cancel invoice</button></form>`
      : "";
    return page(req, reply, "/invoices", "Invoice", html`${renderInvoice(inv, found.articles)}${form}`);
  });
  web.post("/invoices/:id/cancel", { preHandler: t.managerOnly }, async (req, reply) => {
    const p = IdParams.safeParse(req.params);
    const found = p.success ? await loadInvoice(ctx, p.data.id) : null;
    if (found === null) return notFound(reply, "No such invoice.");
    const inv = found.invoice;
    if (
      s.invoices === undefined ||
      inv.remote_id === null ||
      (inv.status !== "sent" && inv.status !== "overdue")
    )
      return t.sendHtml(
        reply,
        messagePage("Not cancelled", `An invoice that is ${inv.status} cannot be cancelled here.`),
        409,
      );
    try {
      await s.invoices.client.cancel(inv.remote_id);
    } catch (e) {
      ctx.logger.warn(
        { invoice: inv.id, error: e instanceof Error ? e.message : "failed" },
        "invoice cancel failed",
      );
      return t.sendHtml(
        reply,
        messagePage("Not cancelled", "The invoice service refused or could not be reached."),
        502,
      );
    }
    await applyRemoteStatus(invoicesDb(ctx), ctx.clock.now(), {
      remoteId: inv.remote_id,
      status: "Canceled",
      sequence: null,
    });
    ctx.logger.info({ invoice: inv.id, by: t.session(req).username }, "invoice cancelled");
    return reply.redirect(`/invoices/${encodeURIComponent(inv.id)}`, 303);
  });

  // Bundle upload for managers (the page itself is the dashboard's /bundles; the form is at /bundles/upload).
  // In a scope of its own: only this route parses multipart bodies, and a request that is not a manager's
  // session from this site is refused before its (up to 64 MiB) body is read.
  await web.register(async (up) => {
    up.addHook("onRequest", async (req, reply) => {
      if (req.method !== "POST") return undefined;
      const token = req.cookies[SESSION_COOKIE];
      const who = token === undefined ? null : await sessionOf(ctx, token);
      if (!sameOrigin(req) || who === null || who.role !== "manager")
        return t.sendHtml(reply, messagePage("Refused", "Only a manager may upload bundles."), 403);
      return undefined;
    });
    // @fastify/multipart (busboy): one file part of at most MAX_UPLOAD_BYTES and a few small fields; with
    // `keyValues` the fields arrive as strings and the file as a Buffer, so the CSRF check reads `_csrf`
    // from the body as it does for every other form.
    await up.register(fastifyMultipart, {
      attachFieldsToBody: "keyValues",
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 8, fieldSize: 4096, parts: 10 },
      throwFileSizeLimit: true,
    });
    web.get("/bundles/upload", async (req, reply) =>
      page(
        req,
        reply,
        "/bundles",
        "Upload a bundle",
        html`<h1>Upload a bundle</h1>${bundleForm(t.session(req).csrf)}`,
      ),
    );
    up.post(
      "/bundles/upload",
      { preHandler: t.managerOnly, bodyLimit: MAX_UPLOAD_BYTES },
      async (req, reply) => {
        const body = req.body as Record<string, unknown> | undefined;
        const bytes = Buffer.isBuffer(body?.bundle) ? body.bundle : undefined;
        const sess = t.session(req);
        const again = (status: number, msg: string) =>
          page(
            req,
            reply,
            "/bundles",
            "Upload a bundle",
            html`<h1>Upload a bundle</h1>${bundleForm(sess.csrf, html`<p class="error" role="alert">${msg}</p>`)}`,
            status,
          );
        if (bytes === undefined || bytes.length === 0) return again(400, "Choose a bundle file.");
        try {
          const stored = await storeBundle(ctx, bytes, sess.username);
          ctx.logger.info(
            { bundle: stored.id, by: sess.username, created: stored.created },
            "bundle uploaded from the dashboard",
          );
          return reply.redirect("/bundles", 303);
        } catch (e) {
          if (e instanceof BundleUploadError) return again(422, `Refused (${e.code}): ${e.message}`);
          throw e;
        }
      },
    );
  });
}

/** The plugins of `vendd fleet serve` for the configured services. */
export function fleetPlugins(s: FleetServices, opts: { secureCookies: boolean }): FleetPlugin[] {
  const plugins: FleetPlugin[] = [];
  if (s.plans !== undefined) {
    const plans = s.plans;
    plugins.push(async (app, ctx, tools) => {
      await registerPlans(app, ctx, plans);
      registerEntitlementRoute(app, ctx, tools.unitAuth);
    });
  }
  if (s.invoices !== undefined) {
    const inv = s.invoices;
    plugins.push(async (app, ctx) => registerInvoices(app, ctx, { auth: inv.auth, client: inv.client }));
  }
  plugins.push(async (app, ctx) =>
    registerDashboard(app, ctx, {
      secureCookies: opts.secureCookies,
      nav: fleetNav(s),
      bundleUploadHref: "/bundles/upload",
      extend: (web, tools) => mountPages(web, ctx, s, tools),
    }),
  );
  return plugins;
}

export interface FleetJobs {
  /** Names of the jobs started. */
  started: string[];
  /** Runs a job now, through its lock, as the schedule would (tests, operators). */
  run(job: "planCycle" | "invoiceCycle"): Promise<boolean>;
  stop(): Promise<void>;
}

/** Starts the croner jobs the configuration asks for (each under its PostgreSQL advisory lock). */
export function startFleetJobs(
  ctx: FleetContext,
  s: FleetServices,
  sched: FleetConfig["schedules"],
): FleetJobs {
  const crons: Cron[] = [];
  const stops: (() => void)[] = [];
  const started: string[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };
  const logged = (job: string) => (e: unknown) => {
    ctx.logger.error(
      { job, error: e instanceof Error ? e.message : String(e) },
      "scheduled job failed; the next run tries again",
    );
    return false;
  };

  if (s.reporting !== undefined && sched.reconcile !== false) {
    const nightly = startNightlyReconcile(ctx, {
      settings: s.reporting,
      pattern: sched.reconcile,
      days: sched.reconcileDays,
      lock: async (run) => {
        await track(withJobLock(ctx, "reconcile", run));
      },
    });
    stops.push(() => nightly.stop());
    started.push("reconcile");
  }

  const planCycle = async (): Promise<boolean> => {
    const plans = s.plans;
    if (plans === undefined) return false;
    const r = await withJobLock(ctx, "planCycle", () =>
      runPlanCycle(ctx, plans.client, ctx.clock.now(), plans.settings, plansPublisher(ctx, plans.settings)),
    );
    if (r.ran) ctx.logger.info({ ...r.value }, "plan cycle done");
    return r.ran;
  };
  const invoiceCycle = async (): Promise<boolean> => {
    const inv = s.invoices;
    if (inv === undefined) return false;
    const now = ctx.clock.now();
    const month = previousMonth(dayOf(now, ctx.timeZone));
    const r = await withJobLock(ctx, "invoiceCycle", () => runInvoiceCycle(ctx, inv.client, month, now));
    if (r.ran)
      ctx.logger.info(
        { month, created: r.value.created.length, empty: r.value.empty.length },
        "monthly invoices done",
      );
    return r.ran;
  };

  if (s.plans !== undefined && sched.planCycleMinutes > 0) {
    crons.push(
      new Cron(`*/${sched.planCycleMinutes} * * * *`, { timezone: ctx.timeZone, protect: true }, async () => {
        await track(planCycle().catch(logged("planCycle")));
      }),
    );
    started.push("planCycle");
  }
  if (s.invoices !== undefined && sched.invoiceDay > 0) {
    const [hh, mm] = sched.invoiceTime.split(":");
    crons.push(
      new Cron(
        `${Number(mm)} ${Number(hh)} ${sched.invoiceDay} * *`,
        { timezone: ctx.timeZone, protect: true },
        async () => {
          await track(invoiceCycle().catch(logged("invoiceCycle")));
        },
      ),
    );
    started.push("invoiceCycle");
  }
  return {
    started,
    run: (job) => track(job === "planCycle" ? planCycle() : invoiceCycle()),
    async stop() {
      for (const c of crons) c.stop();
      for (const f of stops) f();
      await Promise.allSettled([...inFlight]);
    },
  };
}
