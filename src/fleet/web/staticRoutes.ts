/** The health check and the dashboard's static files (its script, style and icon, and uPlot). */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { FastifyInstance } from "fastify";
import type { FleetContext } from "../context.js";
import { pingDatabase } from "../db/health.js";
import { APP_CSS, APP_JS, FAVICON_SVG } from "./assets.js";

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

export function registerStaticRoutes(web: FastifyInstance, ctx: FleetContext): void {
  const files = staticFiles();

  web.get("/healthz", async (_req, reply) => {
    try {
      await pingDatabase(ctx.db);
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
}
