/** The reconciliation pages of the composed fleet server (issue 17). */

import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { isDay } from "../../core/days.js";
import type { FleetContext } from "../context.js";
import type { DashboardTools } from "../web/index.js";
import { messagePage } from "../web/pages.js";
import type { PageTools } from "../web/pageTools.js";
import { getRun, listRuns, runDays, runLines, runUnits } from "./store.js";
import { renderLinesPage, renderRunPage, renderRunsPage } from "./views.js";

const RunParams = z.object({ runId: z.coerce.number().int().positive() });
const LinesQuery = z.object({
  day: z.string().refine(isDay, "a day YYYY-MM-DD that exists").optional(),
  unit: z.string().min(1).max(200).optional(),
  all: z.literal("1").optional(),
});

export function mountReconcilePages(
  web: FastifyInstance,
  ctx: FleetContext,
  t: DashboardTools,
  p: PageTools,
): void {
  const { page, notFound } = p;
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
}
