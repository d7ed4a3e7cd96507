/**
 * The fleet server (`vendd fleet serve`): Fastify 5 with the unit API (units/routes.ts) and whatever plugins the
 * caller adds after it (the dashboard, `registerDashboard` in web/index.ts). The process is stateless: every
 * fact is in the database (one SQLite file, or PostgreSQL shared by several fleet processes behind a load
 * balancer), so any number of processes can serve one PostgreSQL database.
 */
import Fastify, { type FastifyInstance, LogController } from "fastify";
import type pino from "pino";
import { systemClock, type Timer } from "../core/clock.js";
import { type FleetServerFaultPoints, NO_FLEET_SERVER_FAULTS } from "../core/faults.js";
import { KEY_CACHE_MAX, publicKeyFromRaw } from "../core/fleetAuth.js";
import { createLogger } from "../core/log.js";
import type { PublicKey, SecretKey } from "../update/minisign.js";
import type { FleetContext } from "./context.js";
import { openFleetDb } from "./database.js";
import { isPostgresUrl } from "./db/open.js";
import type { FleetPluginTools } from "./feature.js";
import { createFleetMetrics } from "./metrics/index.js";
import { registerRequestLog } from "./requestLog.js";
import { registerUnitApi, UNIT_BODY_LIMIT } from "./units/routes.js";
import { approvedKeys, purgeNonces } from "./units/store.js";
import { messagePage } from "./web/pages.js";
import { apiError, isApiPath, securityHeaders } from "./web/security.js";

export type { FleetPluginTools } from "./feature.js";

export type FleetPlugin = (app: FastifyInstance, ctx: FleetContext, tools: FleetPluginTools) => Promise<void>;

export interface FleetAppOptions {
  /** Registered after the unit API, in order (the dashboard). */
  plugins?: FleetPlugin[];
  /** Fault points of the ingest transaction (crash tests); default none. */
  faults?: FleetServerFaultPoints;
  /** How often expired nonces are deleted, ms; default one minute. */
  noncePurgeMs?: number;
  /** Heartbeat answers carry the entitlement list's ETag (plans configured). */
  entitlements?: boolean;
  /** The values key (issue 41): heartbeat answers carry `valuesEtag`, `GET /values` serves signed values. */
  valuesKey?: SecretKey;
  /** Serve HTTPS with this PEM certificate chain and key. */
  https?: { cert: Buffer; key: Buffer };
  /** Trust X-Forwarded-* from a TLS-terminating proxy (request protocol and address). */
  trustProxy?: boolean;
  /** Most enrolments waiting for approval (units/routes.ts); default DEFAULT_MAX_PENDING_ENROLMENTS. */
  maxPendingEnrolments?: number;
}

export { purgeNonces };

/** How long `close()` lets in-flight requests finish before it cuts the connections, ms. */
export const CLOSE_GRACE_MS = 5_000;

export async function createFleetApp(
  ctx: FleetContext,
  opts: FleetAppOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger,
    // Per-request lines at debug and a summary a minute at info (requestLog.ts).
    // (through a LogController: the top-level disableRequestLogging option is deprecated, FSTDEP023).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: UNIT_BODY_LIMIT,
    trustProxy: opts.trustProxy ?? false,
    ...(opts.https === undefined ? {} : { https: opts.https }),
  }) as unknown as FastifyInstance;
  // Every answer, a 404 of a path no route has included, carries the dashboard's security headers.
  app.addHook("onRequest", async (req, reply) => {
    securityHeaders(reply, req.url, opts.https !== undefined || opts.trustProxy === true);
  });
  // Unknown paths: the APIs' one error shape under /api/, a page elsewhere (docs/fleet-api-errors.md).
  app.setNotFoundHandler(async (req, reply) => {
    if (isApiPath(req.url)) return apiError(reply, 404, "not_found", "no such path");
    return reply
      .code(404)
      .type("text/html; charset=utf-8")
      .send(messagePage("Not found", "There is no page here."));
  });
  registerRequestLog(app, ctx);
  const metrics = createFleetMetrics();
  const unitAuth = await registerUnitApi(app, ctx, {
    onIngest: metrics.observeIngest,
    faults: opts.faults ?? NO_FLEET_SERVER_FAULTS,
    ...(opts.entitlements === undefined ? {} : { entitlements: opts.entitlements }),
    ...(opts.valuesKey === undefined ? {} : { valuesKey: opts.valuesKey }),
    ...(opts.maxPendingEnrolments === undefined ? {} : { maxPendingEnrolments: opts.maxPendingEnrolments }),
  });
  for (const plugin of opts.plugins ?? []) await plugin(app, ctx, { unitAuth, metrics });

  const every = opts.noncePurgeMs ?? 60_000;
  let timer: Timer | null = null;
  let closed = false;
  const schedule = (): void => {
    timer = ctx.clock.setTimer(every, () => {
      purgeNonces(ctx)
        .catch((err: unknown) => ctx.logger.warn({ err }, "nonce purge failed"))
        .finally(() => {
          if (!closed) schedule();
        });
    });
  };
  app.addHook("onReady", async () => {
    await purgeNonces(ctx);
    schedule();
  });
  app.addHook("onClose", async () => {
    closed = true;
    timer?.cancel();
  });
  return app;
}

export interface FleetServerOptions {
  /** SQLite file path (or `:memory:`), or a `postgres://` URL. */
  db: string;
  host: string;
  port: number;
  timeZone: string;
  logLevel?: string;
  plugins?: FleetPlugin[];
  faults?: FleetServerFaultPoints;
  logger?: pino.Logger;
  /** Keys an uploaded bundle must be signed by (FleetContext.bundleKeys). */
  bundleKeys?: readonly PublicKey[];
  entitlements?: boolean;
  valuesKey?: SecretKey;
  https?: { cert: Buffer; key: Buffer };
  trustProxy?: boolean;
  maxPendingEnrolments?: number;
  /** More values the logger must redact (secrets from the fleet config). */
  secrets?: readonly string[];
}

export interface RunningFleetServer {
  app: FastifyInstance;
  ctx: FleetContext;
  /** `http(s)://host:port` it listens on. */
  url: string;
  /** Where the database is, password removed. */
  where: string;
  close(): Promise<void>;
}

/**
 * Parses every approved unit's key before the first request. Parsing one costs about 0.2 ms (fleetAuth.ts
 * keeps them); after a restart the first heartbeats of 10,000 units would otherwise pay 2 s of it within
 * their first minute, on top of everything else a cold process does.
 */
async function warmKeyCache(ctx: FleetContext): Promise<void> {
  const rows = await approvedKeys(ctx, KEY_CACHE_MAX);
  for (const r of rows) publicKeyFromRaw(r.public_key);
}

/** Opens the database (migrating it), builds the app and listens. */
export async function startFleetServer(opts: FleetServerOptions): Promise<RunningFleetServer> {
  const secrets: string[] = [...(opts.secrets ?? [])];
  if (isPostgresUrl(opts.db)) {
    try {
      const pw = decodeURIComponent(new URL(opts.db).password);
      if (pw !== "") secrets.push(pw);
    } catch {
      // unparsable: pg refuses it below, and redactUrl never prints it
    }
  }
  const logger = opts.logger ?? createLogger({ level: opts.logLevel ?? "info", secrets });
  const fdb = await openFleetDb(opts.db, { warm: true });
  const ctx: FleetContext = {
    db: fdb.db,
    lightDb: fdb.light,
    hot: fdb.hot,
    dialect: fdb.dialect,
    clock: systemClock,
    logger,
    timeZone: opts.timeZone,
    ...(opts.bundleKeys === undefined ? {} : { bundleKeys: opts.bundleKeys }),
  };
  let app: FastifyInstance | undefined;
  try {
    await warmKeyCache(ctx);
    app = await createFleetApp(ctx, {
      ...(opts.plugins === undefined ? {} : { plugins: opts.plugins }),
      ...(opts.faults === undefined ? {} : { faults: opts.faults }),
      ...(opts.entitlements === undefined ? {} : { entitlements: opts.entitlements }),
      ...(opts.valuesKey === undefined ? {} : { valuesKey: opts.valuesKey }),
      ...(opts.https === undefined ? {} : { https: opts.https }),
      ...(opts.trustProxy === undefined ? {} : { trustProxy: opts.trustProxy }),
      ...(opts.maxPendingEnrolments === undefined ? {} : { maxPendingEnrolments: opts.maxPendingEnrolments }),
    });
    await app.listen({ host: opts.host, port: opts.port });
  } catch (err) {
    // Nothing may stay open (the nonce purge timer, the pools): the caller exits.
    await app?.close().catch(() => undefined);
    await fdb.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === "object" && addr !== null ? addr.port : opts.port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | null = null;
  return {
    app,
    ctx,
    url: `${opts.https === undefined ? "http" : "https"}://${host}:${port}`,
    where: fdb.where,
    close() {
      closing ??= (async () => {
        // In-flight requests get CLOSE_GRACE_MS to finish; then every connection is cut (a browser's
        // keep-alive or a stalled client must not keep SIGTERM from ending the process).
        const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(cut);
        }
        await fdb.close();
      })();
      return closing;
    },
  };
}
