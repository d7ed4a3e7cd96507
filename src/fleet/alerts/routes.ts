/**
 * The alerts page of the dashboard (`/alerts`: open, acknowledged, resolved; filter by unit and rule), the
 * managers' acknowledge form (`POST /alerts/:id/ack`, CSRF-checked by the dashboard's hooks), and
 * `/api/v1/alerts` (JSON). Mounted by src/fleet/features.ts inside the dashboard (login, roles, CSRF).
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import type { DashboardTools } from "../web/index.js";
import type { PageTools } from "../web/pageTools.js";
import { ALERT_RULES, alertsDb } from "./schema.js";
import { mountSilencePages } from "./silenceRoutes.js";
import { type AlertFilter, acknowledge, deliveryProblems, listAlerts } from "./store.js";
import { renderAlertsPage } from "./views.js";

const Query = z.object({
  state: z.enum(["", "open", "acknowledged", "resolved", "active"]).optional(),
  unit: z.string().max(64).optional(),
  rule: z.union([z.literal(""), z.enum(ALERT_RULES as [string, ...string[]])]).optional(),
});
const AckParams = z.object({ id: z.string().uuid() });

function filterOf(q: z.infer<typeof Query>): AlertFilter {
  const f: AlertFilter = {};
  if (q.state !== undefined && q.state !== "") f.state = q.state;
  else f.state = "active";
  if (q.unit !== undefined && q.unit.trim() !== "") f.unit = q.unit.trim();
  if (q.rule !== undefined && q.rule !== "") f.rule = q.rule as AlertFilter["rule"] & string;
  return f;
}

export function mountAlertPages(
  web: FastifyInstance,
  ctx: FleetContext,
  t: DashboardTools,
  p: PageTools,
  enabled = true,
): void {
  const db = alertsDb(ctx);
  web.get("/alerts", async (req, reply) => {
    const q = Query.safeParse(req.query);
    if (!q.success) return t.sendHtml(reply, "<!doctype html><p>Bad filter: state, unit, rule.</p>", 400);
    const sess = t.session(req);
    const body = renderAlertsPage({
      alerts: await listAlerts(db, filterOf(q.data)),
      problems: await deliveryProblems(db),
      filter: {
        ...(q.data.state === undefined ? {} : { state: q.data.state }),
        ...(q.data.unit === undefined ? {} : { unit: q.data.unit }),
        ...(q.data.rule === undefined ? {} : { rule: q.data.rule }),
      },
      csrf: sess.role === "manager" ? sess.csrf : null,
      timeZone: ctx.timeZone,
      enabled,
    });
    return p.page(req, reply, "/alerts", "Alerts", body);
  });
  web.post("/alerts/:id/ack", { preHandler: t.managerOnly }, async (req, reply) => {
    const a = AckParams.safeParse(req.params);
    if (!a.success) return p.notFound(reply, "No such alert.");
    const by = t.session(req).username;
    const done = await acknowledge(db, a.data.id, by, ctx.clock.now());
    if (done) ctx.logger.info({ alert: a.data.id, by }, "alert acknowledged");
    return reply.redirect("/alerts", 303);
  });
  mountSilencePages(web, ctx, t, p);
  web.get("/api/v1/alerts", async (req, reply) => {
    const q = Query.safeParse(req.query);
    if (!q.success)
      return reply.code(400).send({ error: { code: "bad_query", message: "state, unit, rule" } });
    return {
      alerting: enabled ? "on" : "off",
      alerts: await listAlerts(db, filterOf(q.data)),
      deliveryProblems: await deliveryProblems(db),
    };
  });
}
