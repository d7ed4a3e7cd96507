/**
 * The fleet dashboard as a Fastify plugin: server-rendered pages, a JSON API behind the same session, login
 * and logout, and the managers' enrolment decisions. `registerDashboard` registers everything in its own
 * encapsulated context (cookie and form parsing, security headers, the session check), so the unit API
 * registered beside it is untouched.
 *
 * Security (fleet.md §6): sessions are server-side (accounts.ts); every POST needs the session's CSRF token
 * (`_csrf` field or `x-csrf-token` header) and a same-origin Origin (or Referer); managers alone decide on
 * units; every page is sent with a strict CSP (no inline script or style), X-Frame-Options DENY, nosniff.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fastifyCookie from "@fastify/cookie";
import fastifyFormbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from "fastify";
import { sql } from "kysely";
import { z } from "zod";
import type { FleetContext } from "../context.js";
import { dayOf } from "../context.js";
import { approveUnit, revokeUnit } from "../units.js";
import { csrfMatches, login, logout, type Session, sessionOf } from "./accounts.js";
import { APP_CSS, APP_JS, FAVICON_SVG } from "./assets.js";
import {
  bundlesPage,
  loginPage,
  messagePage,
  money,
  overviewPage,
  type PageContext,
  salesPage,
  unitPage,
  unitsPage,
} from "./pages.js";
import {
  addDays,
  isDay,
  listBundles,
  listUnits,
  overview,
  type SalesGroup,
  salesBy,
  totals,
  unitDetail,
} from "./queries.js";

export interface DashboardOptions {
  /** Mark the session cookie Secure (set when the fleet is served over TLS, directly or behind a proxy). */
  secureCookies?: boolean;
  /** The bundle upload form's path (mounted by `extend`): the bundles page links to it for managers. */
  bundleUploadHref?: string;
  /** Nav entries for the pages `extend` adds, as [href, label]. */
  nav?: readonly (readonly [string, string])[];
  /**
   * More pages and forms, registered inside the dashboard's scope: behind its login, CSRF and same-origin
   * checks and security headers (the fleet server mounts reconciliation, plans and invoices this way).
   */
  extend?: (web: FastifyInstance, tools: DashboardTools) => Promise<void>;
}

/** What `extend` gets to render pages in the dashboard's layout. */
export interface DashboardTools {
  /** The logged-in session of a request (every non-public route has one). */
  session(req: FastifyRequest): Session;
  /** The page context for `layout` (session, time zone, now, nav). */
  pageContext(req: FastifyRequest): PageContext;
  sendHtml(reply: FastifyReply, body: string, status?: number): FastifyReply;
  /** A preHandler that answers 403 unless the session is a manager's. */
  managerOnly: preHandlerHookHandler;
}

export const SESSION_COOKIE = "vendd_session";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * `same-origin`, not `no-referrer`: with `no-referrer` a browser sends `Origin: null` on a form post
 * (Fetch standard, "append a request Origin header"), which would defeat the same-origin check. No
 * referrer ever leaves the site either way.
 */
export const REFERRER_POLICY = "same-origin";

const require = createRequire(import.meta.url);

interface StaticFile {
  type: string;
  body: string | Buffer;
}

function staticFiles(): Map<string, StaticFile> {
  return new Map<string, StaticFile>([
    ["app.js", { type: "text/javascript; charset=utf-8", body: APP_JS }],
    ["app.css", { type: "text/css; charset=utf-8", body: APP_CSS }],
    ["favicon.svg", { type: "image/svg+xml", body: FAVICON_SVG }],
    [
      "uPlot.iife.min.js",
      {
        type: "text/javascript; charset=utf-8",
        body: readFileSync(require.resolve("uplot/dist/uPlot.iife.min.js")),
      },
    ],
    [
      "uPlot.min.css",
      { type: "text/css; charset=utf-8", body: readFileSync(require.resolve("uplot/dist/uPlot.min.css")) },
    ],
  ]);
}

const Day = z.string().refine(isDay, "a day is YYYY-MM-DD");
const SalesQuery = z.object({
  from: Day.optional(),
  to: Day.optional(),
  unit: z.string().max(200).optional(),
  group: z.enum(["day", "unit", "item"]).optional(),
});
const LoginBody = z.object({
  username: z.string().max(200),
  password: z.string().max(4096),
});
const UnitParams = z.object({ id: z.string().min(1).max(200) });

/** `a` → 'a; cells a spreadsheet would read as a formula get a leading quote; then RFC 4180 quoting. */
export function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const PUBLIC_PATHS = new Set(["/login", "/healthz"]);

function isPublic(url: string): boolean {
  const path = url.split("?")[0] ?? url;
  return PUBLIC_PATHS.has(path) || path.startsWith("/static/");
}

/** True when the request's Origin (or, without one, its Referer) is this site. */
export function sameOrigin(req: FastifyRequest): boolean {
  const host = req.headers.host;
  if (host === undefined) return false;
  const source = req.headers.origin ?? req.headers.referer;
  if (typeof source !== "string" || source === "null") return false;
  try {
    return new URL(source).host === host;
  } catch {
    return false;
  }
}

export async function registerDashboard(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: DashboardOptions = {},
): Promise<void> {
  const files = staticFiles();
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
    });
    const sendHtml = (reply: FastifyReply, body: string, status = 200) =>
      reply.code(status).type("text/html; charset=utf-8").send(body);

    web.addHook("onRequest", async (req, reply) => {
      reply.header("content-security-policy", CONTENT_SECURITY_POLICY);
      reply.header("x-frame-options", "DENY");
      reply.header("x-content-type-options", "nosniff");
      reply.header("referrer-policy", REFERRER_POLICY);
      reply.header("cross-origin-opener-policy", "same-origin");
      if (opts.secureCookies === true) reply.header("strict-transport-security", "max-age=31536000");
      if (!req.url.startsWith("/static/")) reply.header("cache-control", "no-store");
    });

    web.addHook("preHandler", async (req, reply) => {
      const url = req.url;
      const unsafe = req.method !== "GET" && req.method !== "HEAD";
      if (unsafe && !sameOrigin(req)) {
        ctx.logger.warn(
          { url: url.slice(0, 200), method: req.method },
          "dashboard: cross-origin post refused",
        );
        return sendHtml(reply, messagePage("Refused", "This request did not come from this site."), 403);
      }
      if (isPublic(url)) return;
      const token = req.cookies[SESSION_COOKIE];
      const s = token === undefined ? null : await sessionOf(ctx, token);
      if (s === null) {
        if (url.startsWith("/api/")) return reply.code(401).send({ error: "unauthenticated" });
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
      if (req.url.startsWith("/api/"))
        return reply.code(status).send({ error: status === 500 ? "internal" : "bad request" });
      return sendHtml(
        reply,
        messagePage("Error", status === 500 ? "Something went wrong; see the fleet's log." : "Bad request."),
        status,
      );
    });

    web.get("/healthz", async (_req, reply) => {
      try {
        await sql`select 1`.execute(ctx.db);
        return reply.send({ status: "ok" });
      } catch {
        return reply.code(503).send({ status: "database unavailable" });
      }
    });

    web.get("/static/:name", async (req, reply) => {
      const { name } = req.params as { name: string };
      const f = files.get(name);
      if (f === undefined) return reply.code(404).type("text/plain").send("not found");
      return reply.type(f.type).header("cache-control", "public, max-age=3600").send(f.body);
    });

    web.get("/login", async (req, reply) => {
      const token = req.cookies[SESSION_COOKIE];
      if (token !== undefined && (await sessionOf(ctx, token)) !== null) return reply.redirect("/", 303);
      return sendHtml(reply, loginPage(null));
    });

    web.post("/login", async (req, reply) => {
      const parsed = LoginBody.safeParse(req.body);
      if (!parsed.success) return sendHtml(reply, loginPage("Enter a user name and a password."), 400);
      const { username, password } = parsed.data;
      const result = await login(ctx, username, password, req.ip);
      if (result.kind === "throttled") {
        reply.header("retry-after", String(result.retryAfterSeconds));
        return sendHtml(
          reply,
          loginPage(
            `Too many failed logins: try again in ${Math.ceil(result.retryAfterSeconds / 60)} min.`,
            username,
          ),
          429,
        );
      }
      if (result.kind === "refused")
        return sendHtml(reply, loginPage("Wrong user name or password.", username), 401);
      // A new token at every login; the old session (if any) ends.
      const old = req.cookies[SESSION_COOKIE];
      if (old !== undefined) {
        const s = await sessionOf(ctx, old);
        if (s !== null) await logout(ctx, s.id);
      }
      reply.setCookie(SESSION_COOKIE, result.token, {
        httpOnly: true,
        sameSite: "strict",
        secure: secure(req),
        path: "/",
        // No Max-Age: a browser-session cookie; the server ends it after SESSION_IDLE_MS unused.
      });
      return reply.redirect("/", 303);
    });

    web.post("/logout", async (req, reply) => {
      await logout(ctx, session(req).id);
      reply.clearCookie(SESSION_COOKIE, {
        path: "/",
        httpOnly: true,
        sameSite: "strict",
        secure: secure(req),
      });
      return reply.redirect("/login", 303);
    });

    const decide = (action: "approve" | "revoke") => async (req: FastifyRequest, reply: FastifyReply) => {
      const s = session(req);
      if (s.role !== "manager")
        return sendHtml(reply, messagePage("Refused", "Only a manager approves or revokes units."), 403);
      const p = UnitParams.safeParse(req.params);
      if (!p.success) return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
      const result =
        action === "approve"
          ? await approveUnit(ctx, p.data.id, s.username)
          : await revokeUnit(ctx, p.data.id, s.username);
      if (result === "notFound") return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
      if (result === "alreadyRevoked")
        return sendHtml(
          reply,
          messagePage("Already revoked", "This unit is revoked; it cannot be approved again."),
          409,
        );
      return reply.redirect(`/units/${encodeURIComponent(p.data.id)}`, 303);
    };
    web.post("/units/:id/approve", decide("approve"));
    web.post("/units/:id/revoke", decide("revoke"));

    // Pages.
    web.get("/", async (req, reply) => sendHtml(reply, overviewPage(pc(req), await overview(ctx))));
    web.get("/units", async (req, reply) => sendHtml(reply, unitsPage(pc(req), await listUnits(ctx))));
    web.get("/units/:id", async (req, reply) => {
      const p = UnitParams.safeParse(req.params);
      const d = p.success ? await unitDetail(ctx, p.data.id) : null;
      if (d === null) return sendHtml(reply, messagePage("Not found", "No such unit."), 404);
      return sendHtml(reply, unitPage(pc(req), d));
    });

    /** The sales filter of a query string: default the last 30 days, to ≥ from, at most 366 days. */
    const salesFilter = (query: unknown) => {
      const q = SalesQuery.safeParse(query);
      if (!q.success) return null;
      const today = dayOf(ctx.clock.now(), ctx.timeZone);
      const to = q.data.to ?? today;
      const from = q.data.from ?? addDays(to, -29);
      if (from > to || addDays(from, 366) < to) return null;
      const unit = q.data.unit === "" ? undefined : q.data.unit;
      return { from, to, unit, group: (q.data.group ?? "day") as SalesGroup };
    };

    web.get("/sales", async (req, reply) => {
      const f = salesFilter(req.query);
      if (f === null)
        return sendHtml(
          reply,
          messagePage("Bad request", "from and to are days (YYYY-MM-DD), from ≤ to, at most a year apart."),
          400,
        );
      return sendHtml(
        reply,
        salesPage(pc(req), {
          ...f,
          units: await listUnits(ctx),
          byDay: await salesBy(ctx, f, "day"),
          byUnit: await salesBy(ctx, f, "unit"),
          byItem: await salesBy(ctx, f, "item"),
          totals: await totals(ctx, f),
        }),
      );
    });

    web.get("/sales.csv", async (req, reply) => {
      const f = salesFilter(req.query);
      if (f === null)
        return reply.code(400).type("text/plain").send("from and to are days (YYYY-MM-DD), from <= to\n");
      const rows = await salesBy(ctx, f, f.group);
      const lines = [
        [
          f.group,
          "currency",
          "sessions",
          "sales",
          "captured",
          "refunded",
          "net",
          "vends_ok",
          "vends_failed",
        ].join(","),
        ...rows.map((r) =>
          [
            csvCell(r.key),
            csvCell(r.currency),
            r.sessions,
            r.sales,
            money(r.captured, r.currency),
            money(r.refunded, r.currency),
            money(r.net, r.currency),
            r.vendsOk,
            r.vendsFailed,
          ].join(","),
        ),
      ];
      const name = `sales-${f.group}-${f.from}-${f.to}.csv`;
      return reply
        .type("text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="${name}"`)
        .send(`${lines.join("\r\n")}\r\n`);
    });

    web.get("/bundles", async (req, reply) => sendHtml(reply, bundlesPage(pc(req), await listBundles(ctx))));

    // The JSON API: the same queries, amounts in integer minor units with their currency.
    web.get("/api/v1/overview", async () => overview(ctx));
    web.get("/api/v1/units", async () => ({ units: await listUnits(ctx) }));
    web.get("/api/v1/units/:id", async (req, reply) => {
      const p = UnitParams.safeParse(req.params);
      const d = p.success ? await unitDetail(ctx, p.data.id) : null;
      if (d === null) return reply.code(404).send({ error: "no such unit" });
      return d;
    });
    web.get("/api/v1/sales", async (req, reply) => {
      const f = salesFilter(req.query);
      if (f === null)
        return reply
          .code(400)
          .send({ error: "from and to are days (YYYY-MM-DD), from <= to, at most a year apart" });
      return {
        from: f.from,
        to: f.to,
        unit: f.unit ?? null,
        group: f.group,
        rows: await salesBy(ctx, f, f.group),
      };
    });
    web.get("/api/v1/bundles", async () => ({ bundles: await listBundles(ctx) }));

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
