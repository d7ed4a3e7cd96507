/**
 * `GET /metrics` (issue 45): the fleet's series in the Prometheus text format, for a Prometheus server
 * (a bearer token) or a manager in the dashboard (their session). Refused without either: 401 with
 * `WWW-Authenticate: Bearer`, and 403 for a viewer's session. The token is a secret (`metricsToken` in the
 * fleet's secrets file or $VENDD_METRICS_TOKEN); without one only managers' sessions can read.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { fastifyCookie } from "@fastify/cookie";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { FleetContext } from "../context.js";
import type { FleetMetrics } from "../feature.js";
import { sessionOf } from "../web/accounts.js";
import { SESSION_COOKIE } from "../web/index.js";

export const METRICS_PATH = "/metrics";

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** The bearer token of an `Authorization` header matches `token`, compared in constant time. */
export function bearerMatches(header: unknown, token: string): boolean {
  if (typeof header !== "string") return false;
  const m = /^Bearer +(\S+)\s*$/i.exec(header);
  return m?.[1] !== undefined && timingSafeEqual(digest(m[1]), digest(token));
}

type Access = "allowed" | "unauthenticated" | "forbidden";

async function access(ctx: FleetContext, req: FastifyRequest, token: string | null): Promise<Access> {
  const header = req.headers.authorization;
  if (header !== undefined) {
    return token !== null && bearerMatches(header, token) ? "allowed" : "unauthenticated";
  }
  const cookie = req.headers.cookie;
  const value = cookie === undefined ? undefined : fastifyCookie.parse(cookie)[SESSION_COOKIE];
  const session = value === undefined ? null : await sessionOf(ctx, value);
  if (session === null) return "unauthenticated";
  return session.role === "manager" ? "allowed" : "forbidden";
}

export function registerMetricsRoute(
  app: FastifyInstance,
  ctx: FleetContext,
  metrics: FleetMetrics,
  token: string | null,
): void {
  app.get(METRICS_PATH, async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header("cache-control", "no-store");
    const a = await access(ctx, req, token);
    if (a !== "allowed") {
      if (a === "unauthenticated") reply.header("www-authenticate", 'Bearer realm="vendd-fleet"');
      ctx.logger.warn({ remote: req.ip, access: a }, "metrics: scrape refused");
      return reply
        .code(a === "forbidden" ? 403 : 401)
        .type("text/plain; charset=utf-8")
        .send(
          a === "forbidden"
            ? "metrics are for managers: a viewer's session cannot read them\n"
            : "metrics need a bearer token (metricsToken in the fleet's secrets file) or a manager's dashboard session\n",
        );
    }
    let body: string;
    try {
      body = await metrics.registry.metrics();
    } catch (err) {
      ctx.logger.error({ err }, "metrics: the database could not be read");
      return reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send("the fleet database cannot be read now\n");
    }
    return reply.type(metrics.registry.contentType).send(body);
  });
}
