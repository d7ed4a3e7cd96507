/**
 * The fleet's request log: one line per request at debug (10,000 units heartbeating made about 670 info
 * lines a second), and at info one summary a minute of the requests answered in it (counts by status
 * class, the slowest). Lines name the route pattern, never the URL (a query could carry a token).
 */
import type { FastifyInstance } from "fastify";
import type { Timer } from "../core/clock.js";
import type { FleetContext } from "./context.js";

/** How often the summary is logged, ms. */
export const REQUEST_SUMMARY_MS = 60_000;

interface Window {
  requests: number;
  ok: number;
  clientErrors: number;
  serverErrors: number;
  slowestMs: number;
}

const empty = (): Window => ({ requests: 0, ok: 0, clientErrors: 0, serverErrors: 0, slowestMs: 0 });

/** Registers the hooks on `app`; the summary timer runs from ready to close. */
export function registerRequestLog(
  app: FastifyInstance,
  ctx: FleetContext,
  everyMs = REQUEST_SUMMARY_MS,
): void {
  let window = empty();
  let timer: Timer | null = null;
  let closed = false;
  app.addHook("onResponse", async (req, reply) => {
    const ms = Math.round(reply.elapsedTime);
    const status = reply.statusCode;
    window.requests++;
    if (status >= 500) window.serverErrors++;
    else if (status >= 400) window.clientErrors++;
    else window.ok++;
    if (ms > window.slowestMs) window.slowestMs = ms;
    ctx.logger.debug(
      { reqId: req.id, method: req.method, route: req.routeOptions.url ?? "(no route)", status, ms },
      "request",
    );
  });
  const schedule = (): void => {
    timer = ctx.clock.setTimer(everyMs, () => {
      const w = window;
      window = empty();
      if (w.requests > 0) ctx.logger.info({ ...w, periodMs: everyMs }, "requests answered");
      if (!closed) schedule();
    });
  };
  app.addHook("onReady", async () => {
    schedule();
  });
  app.addHook("onClose", async () => {
    closed = true;
    timer?.cancel();
  });
}
