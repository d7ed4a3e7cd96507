/** The dashboard's options, and the tools `extend` gets to add pages inside the dashboard's scope. */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from "fastify";
import type { FleetContext } from "../context.js";
import type { Session } from "./accounts.js";
import type { PageContext } from "./pages.js";

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
  /** What every page must say at its top while it holds (e.g. a callback address a service refused). */
  notices?: () => readonly string[];
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

/** What the route modules share inside the dashboard's scope: the fleet, the tools, the cookie's Secure flag. */
export interface DashboardScope extends Omit<DashboardTools, "managerOnly"> {
  ctx: FleetContext;
  /** Whether the session cookie gets the Secure attribute for this request. */
  secure(req: FastifyRequest): boolean;
}
