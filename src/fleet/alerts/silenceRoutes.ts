/**
 * Silences, maintenance windows and acknowledgements over HTTP (issue 42), inside the dashboard (login,
 * roles, CSRF: a form's `_csrf`, an API call's `x-csrf-token`):
 *
 * - `/alerts/silences`: the page (everyone logged in reads; managers make, edit and end);
 * - `POST /alerts/:id/unack`: a manager takes an acknowledgement back;
 * - `/api/v1/alerts/silences` (GET, POST), `/api/v1/alerts/silences/:id` (GET, POST: edit),
 *   `/api/v1/alerts/silences/:id/end`, `/api/v1/alerts/:id/ack` and `/unack` (POST): the same as JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import type { DashboardTools } from "../web/index.js";
import type { PageTools } from "../web/pageTools.js";
import { apiError } from "../web/security.js";
import { alertsDb } from "./schema.js";
import {
  createSilence,
  editSilence,
  endSilence,
  getSilence,
  listSilences,
  silencedChanges,
} from "./silenceStore.js";
import { renderSilencesPage } from "./silenceViews.js";
import { acknowledge, unacknowledge } from "./store.js";

const Id = z.object({ id: z.string().uuid() });

/** The form's text fields (the CSRF token and anything not a string left out). */
function fields(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof body !== "object" || body === null) return out;
  for (const [k, v] of Object.entries(body))
    if (typeof v === "string" && k !== "_csrf" && k !== "csrf") out[k] = v;
  return out;
}

/** The form's fields without empty ones (an empty field is "not given"). */
const given = (f: Record<string, string>) =>
  Object.fromEntries(Object.entries(f).filter(([, v]) => v.trim() !== ""));

export function mountSilencePages(
  web: FastifyInstance,
  ctx: FleetContext,
  t: DashboardTools,
  p: PageTools,
): void {
  const db = alertsDb(ctx);
  const page = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: { message?: string; form?: Record<string, string> } = {},
    status = 200,
  ) => {
    const sess = t.session(req);
    const now = ctx.clock.now();
    const body = renderSilencesPage({
      silences: await listSilences(db, now),
      silenced: await silencedChanges(db),
      now,
      csrf: sess.role === "manager" ? sess.csrf : null,
      timeZone: ctx.timeZone,
      ...extra,
    });
    return p.page(req, reply, "/alerts", "Silences", body, status);
  };
  const log = (what: string, by: string, data: Record<string, unknown>) =>
    ctx.logger.info({ by, ...data }, what);

  web.get("/alerts/silences", (req, reply) => page(req, reply));
  web.post("/alerts/silences", { preHandler: t.managerOnly }, async (req, reply) => {
    const by = t.session(req).username;
    const f = fields(req.body);
    const r = await createSilence(db, given(f), by, ctx.clock.now());
    if (!r.ok) return page(req, reply, { message: `Not saved: ${r.problems.join("; ")}.`, form: f }, 400);
    log("alert silence made", by, { silence: r.silence.id, kind: r.silence.kind });
    return reply.redirect("/alerts/silences", 303);
  });
  web.post("/alerts/silences/:id/edit", { preHandler: t.managerOnly }, async (req, reply) => {
    const a = Id.safeParse(req.params);
    if (!a.success) return p.notFound(reply, "No such silence.");
    const by = t.session(req).username;
    const r = await editSilence(db, a.data.id, given(fields(req.body)), by, ctx.clock.now());
    if (!r.ok && r.missing === true) return p.notFound(reply, "No such silence.");
    if (!r.ok) return page(req, reply, { message: `Not changed: ${r.problems.join("; ")}.` }, 400);
    log("alert silence changed", by, { silence: a.data.id });
    return reply.redirect("/alerts/silences", 303);
  });
  web.post("/alerts/silences/:id/end", { preHandler: t.managerOnly }, async (req, reply) => {
    const a = Id.safeParse(req.params);
    if (!a.success) return p.notFound(reply, "No such silence.");
    const by = t.session(req).username;
    if (await endSilence(db, a.data.id, by, ctx.clock.now()))
      log("alert silence ended", by, { silence: a.data.id });
    return reply.redirect("/alerts/silences", 303);
  });
  web.post("/alerts/:id/unack", { preHandler: t.managerOnly }, async (req, reply) => {
    const a = Id.safeParse(req.params);
    if (!a.success) return p.notFound(reply, "No such alert.");
    const by = t.session(req).username;
    if (await unacknowledge(db, a.data.id, by, ctx.clock.now()))
      ctx.logger.info({ alert: a.data.id, by }, "alert acknowledgement taken back");
    return reply.redirect("/alerts?state=acknowledged", 303);
  });

  // The JSON API: the same session; writes need a manager and the x-csrf-token header.
  const manager = (req: FastifyRequest, reply: FastifyReply): string | null => {
    const s = t.session(req);
    if (s.role === "manager") return s.username;
    apiError(reply, 403, "forbidden", "only a manager may do this");
    return null;
  };
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const silenceJson = (x: NonNullable<Awaited<ReturnType<typeof getSilence>>>, now: number) => ({
    ...x,
    state: now >= x.endsAt ? "expired" : now < x.startsAt ? "upcoming" : "active",
    startsAt: iso(x.startsAt),
    endsAt: iso(x.endsAt),
    createdAt: iso(x.createdAt),
    updatedAt: iso(x.updatedAt),
  });
  web.get("/api/v1/alerts/silences", async () => {
    const now = ctx.clock.now();
    return {
      silences: (await listSilences(db, now)).map((x) => silenceJson(x, now)),
      silencedChanges: (await silencedChanges(db)).map((c) => ({ ...c, at: iso(c.at) })),
    };
  });
  web.post("/api/v1/alerts/silences", async (req, reply) => {
    const by = manager(req, reply);
    if (by === null) return reply;
    const now = ctx.clock.now();
    const r = await createSilence(db, fields(req.body), by, now);
    if (!r.ok) return apiError(reply, 400, "bad_silence", r.problems.join("; "));
    log("alert silence made", by, { silence: r.silence.id, kind: r.silence.kind });
    return reply.code(201).send({ silence: silenceJson(r.silence, now) });
  });
  web.get("/api/v1/alerts/silences/:id", async (req, reply) => {
    const a = Id.safeParse(req.params);
    const x = a.success ? await getSilence(db, a.data.id) : null;
    if (x === null) return apiError(reply, 404, "not_found", "no such silence");
    return { silence: silenceJson(x, ctx.clock.now()) };
  });
  web.post("/api/v1/alerts/silences/:id", async (req, reply) => {
    const by = manager(req, reply);
    if (by === null) return reply;
    const a = Id.safeParse(req.params);
    if (!a.success) return apiError(reply, 404, "not_found", "no such silence");
    const now = ctx.clock.now();
    const r = await editSilence(db, a.data.id, fields(req.body), by, now);
    if (!r.ok)
      return apiError(
        reply,
        r.missing === true ? 404 : 400,
        r.missing === true ? "not_found" : "bad_silence",
        r.problems.join("; "),
      );
    log("alert silence changed", by, { silence: a.data.id });
    return { silence: silenceJson(r.silence, now) };
  });
  web.post("/api/v1/alerts/silences/:id/end", async (req, reply) => {
    const by = manager(req, reply);
    if (by === null) return reply;
    const a = Id.safeParse(req.params);
    if (!a.success) return apiError(reply, 404, "not_found", "no such silence");
    const ended = await endSilence(db, a.data.id, by, ctx.clock.now());
    if (ended) log("alert silence ended", by, { silence: a.data.id });
    return { ended };
  });
  for (const [path, act, what] of [
    ["ack", acknowledge, "alert acknowledged"],
    ["unack", unacknowledge, "alert acknowledgement taken back"],
  ] as const)
    web.post(`/api/v1/alerts/:id/${path}`, async (req, reply) => {
      const by = manager(req, reply);
      if (by === null) return reply;
      const a = Id.safeParse(req.params);
      if (!a.success) return apiError(reply, 404, "not_found", "no such alert");
      const done = await act(db, a.data.id, by, ctx.clock.now());
      if (done) ctx.logger.info({ alert: a.data.id, by }, what);
      return { done };
    });
}
