/** The company invoice pages of the composed fleet server, and cancel for managers (issue 18). */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import { html } from "../web/html.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import { IdParams, type PageTools } from "../web/pageTools.js";
import { applyRemoteStatus, invoicesDb, loadInvoice, loadInvoices } from "./store/invoices.js";
import { renderInvoice, renderInvoices } from "./views.js";

const InvoiceStatus = z.object({
  status: z.enum(["draft", "sent", "paid", "unpaid", "overdue", "cancelled"]).optional(),
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
}
