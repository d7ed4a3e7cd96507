/**
 * The dashboard's security policy (fleet.md §6): the headers every page is sent with, the session cookie's
 * name, the paths reachable without a session, and the same-origin check of every POST.
 */
import type { FastifyReply, FastifyRequest } from "fastify";

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

const PUBLIC_PATHS = new Set(["/login", "/healthz"]);

/** True for the login page, the health check and the static files (no session needed). */
export function isPublic(url: string): boolean {
  const path = url.split("?")[0] ?? url;
  return PUBLIC_PATHS.has(path) || path.startsWith("/static/");
}

/**
 * True when the request's Origin (or, without one, its Referer) is this site. Behind a trusted proxy
 * (`trustProxy: true`) this site is the proxy's `X-Forwarded-Host` and `X-Forwarded-Proto` (Fastify's
 * `req.host` and `req.protocol` read them then, and only then); otherwise the Host header.
 */
export function sameOrigin(req: FastifyRequest): boolean {
  // Fastify defines `req.ips` only when trustProxy is on; `req.host` and `req.protocol` follow it.
  const trusted = req.ips !== undefined;
  const host = trusted ? req.host : req.headers.host;
  if (host === undefined || host === "") return false;
  const source = req.headers.origin ?? req.headers.referer;
  if (typeof source !== "string" || source === "null") return false;
  try {
    const url = new URL(source);
    return url.host === host && (!trusted || url.protocol === `${req.protocol}:`);
  } catch {
    return false;
  }
}

/** The security headers every answer carries, pages, API and 404 alike (fleet.md §6). */
export function securityHeaders(reply: FastifyReply, url: string, hsts: boolean): void {
  reply.header("content-security-policy", CONTENT_SECURITY_POLICY);
  reply.header("x-frame-options", "DENY");
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", REFERRER_POLICY);
  reply.header("cross-origin-opener-policy", "same-origin");
  if (hsts) reply.header("strict-transport-security", "max-age=31536000");
  if (!url.startsWith("/static/")) reply.header("cache-control", "no-store");
}

/** The one error shape of the fleet's JSON APIs (unit and dashboard): `{ error: { code, message } }`. */
export interface ApiError {
  error: { code: string; message: string };
}

/** Sends an API error in that shape. */
export function apiError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const body: ApiError = { error: { code, message } };
  return reply.code(status).send(body);
}

/** True for the JSON APIs' paths (`/api/...`): their errors are ApiError, everything else answers HTML. */
export function isApiPath(url: string): boolean {
  return url === "/api" || url.startsWith("/api/");
}
