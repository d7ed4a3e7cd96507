/** What every page module of the composed fleet server shares: the page helpers and the id parameter. */
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Html } from "./html.js";
import type { DashboardTools } from "./index.js";
import { layout, messagePage } from "./pages.js";

export const IdParams = z.object({ id: z.string().min(1).max(200) });

export interface PageTools {
  /** Sends `body` inside the dashboard's layout, `path` marking the nav entry. */
  page(
    req: FastifyRequest,
    reply: FastifyReply,
    path: string,
    title: string,
    body: Html,
    status?: number,
  ): FastifyReply;
  /** A 404 page saying `what`. */
  notFound(reply: FastifyReply, what: string): FastifyReply;
}

export function pageTools(t: DashboardTools): PageTools {
  const page = (
    req: FastifyRequest,
    reply: FastifyReply,
    path: string,
    title: string,
    body: Html,
    status = 200,
  ) => t.sendHtml(reply, layout(t.pageContext(req), path, title, body, true), status);
  const notFound = (reply: FastifyReply, what: string) =>
    t.sendHtml(reply, messagePage("Not found", what), 404);

  return { page, notFound };
}
