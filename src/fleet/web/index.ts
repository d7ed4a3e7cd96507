/**
 * The fleet dashboard's shell as a Fastify plugin: login and logout, the session, static assets, and the
 * scope the features' pages and JSON API are mounted in through `extend` (features.ts: the units' overview,
 * list and pages with the managers' enrolment decisions, sales, bundles, and the composed server's others). `registerDashboard` registers everything in its own
 * encapsulated context (cookie and form parsing, security headers, the session check), so the unit API
 * registered beside it is untouched.
 *
 * Security (fleet.md §6): sessions are server-side (accounts.ts); every POST needs the session's CSRF token
 * (`_csrf` field or `x-csrf-token` header) and a same-origin Origin (or Referer); managers alone decide on
 * units; every page is sent with a strict CSP (no inline script or style), X-Frame-Options DENY, nosniff.
 */
import fastifyCookie from "@fastify/cookie";
import fastifyFormbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { FleetContext } from "../context.js";
import type { Session } from "./accounts.js";
import { registerAuthRoutes } from "./authRoutes.js";
import { addDashboardHooks } from "./hooks.js";
import type { DashboardOptions, DashboardScope } from "./options.js";
import { messagePage, type PageContext } from "./pages.js";
import { registerStaticRoutes } from "./staticRoutes.js";

export { csvCell } from "./csv.js";
export type { DashboardOptions, DashboardTools } from "./options.js";
export {
  type ApiError,
  apiError,
  CONTENT_SECURITY_POLICY,
  isApiPath,
  REFERRER_POLICY,
  SESSION_COOKIE,
  sameOrigin,
  securityHeaders,
} from "./security.js";

export async function registerDashboard(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: DashboardOptions = {},
): Promise<void> {
  const sessions = new WeakMap<FastifyRequest, Session>();

  await app.register(async (web) => {
    await web.register(fastifyCookie);
    await web.register(fastifyFormbody, { bodyLimit: 16 * 1024 });

    const secure = (req: FastifyRequest): boolean => opts.secureCookies === true || req.protocol === "https";

    const session = (req: FastifyRequest): Session => {
      const s = sessions.get(req);
      if (s === undefined) throw new Error("no session on an authenticated route");
      return s;
    };
    const pc = (req: FastifyRequest): PageContext => ({
      session: session(req),
      timeZone: ctx.timeZone,
      now: ctx.clock.now(),
      ...(opts.nav === undefined ? {} : { extraNav: opts.nav }),
      ...(opts.bundleUploadHref === undefined ? {} : { bundleUploadHref: opts.bundleUploadHref }),
      ...(opts.notices === undefined ? {} : { notices: opts.notices() }),
    });
    const sendHtml = (reply: FastifyReply, body: string, status = 200) =>
      reply.code(status).type("text/html; charset=utf-8").send(body);
    const scope: DashboardScope = { ctx, secure, session, pageContext: pc, sendHtml };

    addDashboardHooks(web, ctx, opts, sessions, sendHtml);
    registerStaticRoutes(web, ctx);
    registerAuthRoutes(web, scope);

    if (opts.extend !== undefined)
      await opts.extend(web, {
        session,
        pageContext: pc,
        sendHtml,
        managerOnly: async (req, reply) => {
          if (session(req).role !== "manager")
            return sendHtml(reply, messagePage("Refused", "Only a manager may do this."), 403);
          return undefined;
        },
      });
  });
}
