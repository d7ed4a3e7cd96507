/**
 * The company invoice pages of the composed fleet server, and cancel for managers (issue 18); "run now" with
 * its preview for managers (issue 43, runViews.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import { periodOf, previousPeriod } from "../plans/index.js";
import { html } from "../web/html.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import { IdParams, type PageTools } from "../web/pageTools.js";
import { previewInvoice, runInvoiceCycle } from "./cycle.js";
import { previewPage, runNowForm } from "./runViews.js";
import {
  applyRemoteStatus,
  invoiceOfMonth,
  invoicesDb,
  loadCompanies,
  loadInvoice,
  loadInvoices,
} from "./store/invoices.js";
import { renderInvoice, renderInvoices } from "./views.js";

const InvoiceStatus = z.object({
  status: z.enum(["draft", "sent", "paid", "unpaid", "overdue", "cancelled"]).optional(),
});

const RunArgs = z.object({
  company: z.string().min(1).max(200),
  month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/),
});

export function mountInvoicePages(
  web: FastifyInstance,
  ctx: FleetContext,
  s: { invoices?: { client: InvoicesClient } | undefined },
  t: DashboardTools,
  p: PageTools,
): void {
  const { page, notFound } = p;
  // Company invoices (issue 18): pages, and cancel for managers when the invoice client is configured.
  web.get("/invoices", async (req, reply) => {
    const q = InvoiceStatus.safeParse(req.query);
    if (!q.success) return t.sendHtml(reply, messagePage("Bad request", "Unknown invoice status."), 400);
    const rows = await loadInvoices(ctx, q.data.status === undefined ? {} : { status: q.data.status });
    const run =
      s.invoices !== undefined && t.session(req).role === "manager"
        ? runNowForm(await loadCompanies(ctx), previousPeriod(periodOf(ctx.clock.now(), ctx.timeZone)))
        : "";
    return page(req, reply, "/invoices", "Invoices", html`${renderInvoices(rows)}${run}`);
  });
  // Run now (issue 43): a manager previews one company's invoice of a finished month, then makes and sends
  // it with the same code as the monthly run (cycle.ts), for that company only.
  const runRefused = (req: FastifyRequest, reply: FastifyReply, message: string, status: number) =>
    page(
      req,
      reply,
      "/invoices",
      "Run now",
      html`<h1>Run now</h1><p class="error" role="alert">${message}</p><p><a href="/invoices">Back to the invoices</a></p>`,
      status,
    );
  const runArgs = (from: unknown): { company: string; month: string } | { error: string } => {
    const r = RunArgs.safeParse(from);
    if (r.success) return r.data;
    return { error: "Choose a company and a month written YYYY-MM (e.g. 2026-10)." };
  };
  web.get("/invoices/run", { preHandler: t.managerOnly }, async (req, reply) => {
    const a = runArgs(req.query);
    if ("error" in a) return runRefused(req, reply, a.error, 422);
    let preview: Awaited<ReturnType<typeof previewInvoice>>;
    try {
      preview = await previewInvoice(ctx, a.company, a.month, ctx.clock.now());
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      return runRefused(req, reply, `${e.message}: only a finished month is invoiced.`, 422);
    }
    if (preview === undefined) return notFound(reply, "No such company.");
    return page(req, reply, "/invoices", "Invoice preview", previewPage(preview, t.session(req).csrf));
  });
  web.post("/invoices/run", { preHandler: t.managerOnly }, async (req, reply) => {
    const a = runArgs(req.body);
    if ("error" in a) return runRefused(req, reply, a.error, 422);
    if (s.invoices === undefined)
      return runRefused(
        req,
        reply,
        "The invoice service is not configured (invoices in the fleet config).",
        409,
      );
    let report: Awaited<ReturnType<typeof runInvoiceCycle>>;
    try {
      report = await runInvoiceCycle(ctx, s.invoices.client, a.month, ctx.clock.now(), {
        companyId: a.company,
      });
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      return runRefused(req, reply, `${e.message}: only a finished month is invoiced.`, 422);
    }
    ctx.logger.info(
      { company: a.company, month: a.month, by: t.session(req).username, sent: report.sent.length },
      "invoice run now",
    );
    const failed = report.buildErrors[0]?.reason ?? report.sendErrors[0]?.reason;
    if (failed !== undefined) return runRefused(req, reply, `Not sent: ${failed}`, 502);
    const made = await invoiceOfMonth(invoicesDb(ctx), a.company, a.month);
    if (made === undefined) return runRefused(req, reply, `Nothing to bill for ${a.month}.`, 422);
    return reply.redirect(`/invoices/${encodeURIComponent(made.id)}`, 303);
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
}
