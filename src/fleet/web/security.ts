/**
 * The dashboard's security policy (fleet.md §6): the headers every page is sent with, the session cookie's
 * name, the paths reachable without a session, and the same-origin check of every POST.
 */
import type { FastifyRequest } from "fastify";

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
