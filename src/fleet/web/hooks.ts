/**
 * The dashboard scope's hooks: security headers on every answer; before every handler the same-origin check
 * of a POST, the session check (a redirect to /login, or 401 on the API) and the POST's CSRF token; and the
 * error handler (only an error's name and message reach the log).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { FleetContext } from "../context.js";
import { csrfMatches, type Session, sessionOf } from "./accounts.js";
import type { DashboardOptions, DashboardScope } from "./options.js";
import { messagePage } from "./pages.js";
import { apiError, isApiPath, isPublic, SESSION_COOKIE, sameOrigin, securityHeaders } from "./security.js";

export function addDashboardHooks(
  web: FastifyInstance,
  ctx: FleetContext,
  opts: DashboardOptions,
  sessions: WeakMap<FastifyRequest, Session>,
  sendHtml: DashboardScope["sendHtml"],
): void {
  web.addHook("onRequest", async (req, reply) => {
    securityHeaders(reply, req.url, opts.secureCookies === true);
  });

  web.addHook("preHandler", async (req, reply) => {
    const url = req.url;
    const unsafe = req.method !== "GET" && req.method !== "HEAD";
    if (unsafe && !sameOrigin(req)) {
      ctx.logger.warn({ url: url.slice(0, 200), method: req.method }, "dashboard: cross-origin post refused");
      return sendHtml(reply, messagePage("Refused", "This request did not come from this site."), 403);
    }
    if (isPublic(url)) return;
    const token = req.cookies[SESSION_COOKIE];
    const s = token === undefined ? null : await sessionOf(ctx, token);
    if (s === null) {
      if (isApiPath(url)) return apiError(reply, 401, "unauthenticated", "log in first (POST /login)");
      if (unsafe)
        return sendHtml(reply, messagePage("Refused", "Your session has ended: log in again."), 403);
      return reply.redirect("/login", 303);
    }
    sessions.set(req, s);
    if (unsafe) {
      const body: unknown = req.body;
      // `_csrf`, or `csrf` (the plans module's manager forms name it so).
      const fields = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : null;
      const field =
        fields !== null && "_csrf" in fields
          ? fields._csrf
          : fields !== null && "csrf" in fields
            ? fields.csrf
            : req.headers["x-csrf-token"];
      if (!csrfMatches(field, s.csrf)) {
        ctx.logger.warn(
          { url: url.slice(0, 200), user: s.username },
          "dashboard: post without a valid CSRF token refused",
        );
        return sendHtml(
          reply,
          messagePage("Refused", "The form's security token is missing or stale: reload the page."),
          403,
        );
      }
    }
  });

  web.setErrorHandler(async (err: unknown, req, reply) => {
    const code =
      typeof err === "object" && err !== null && "statusCode" in err ? Number(err.statusCode) : 500;
    const status = code >= 400 && code < 500 ? code : 500;
    // Only the error's name and message: a database error's parameters may hold form fields.
    const error = err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 500) : "non-error thrown";
    ctx.logger.error({ error, url: req.url.slice(0, 200) }, "dashboard request failed");
    if (isApiPath(req.url))
      return status === 500
        ? apiError(reply, 500, "internal", "the fleet could not process the request")
        : apiError(reply, status, "bad_request", "bad request");
    return sendHtml(
      reply,
      messagePage("Error", status === 500 ? "Something went wrong; see the fleet's log." : "Bad request."),
      status,
    );
  });
}
