/**
 * What a fleet feature hands the composition (features.ts): its name, its routes outside the dashboard,
 * its pages inside it and its nav entries. Each feature's index.ts exports one such object (or a function
 * of the services it needs making one); features.ts lists them, and the list is the order. Its tables are
 * handed over separately, as steps of database.ts's list of migrations.
 */
import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import type { Registry } from "prom-client";
import type { FleetContext } from "./context.js";
import type { DashboardTools } from "./web/index.js";
import type { PageTools } from "./web/pageTools.js";

/** What a plugin may need from the server besides the app and context. */
export interface FleetPluginTools {
  /** The unit API's authentication (signature, nonce, approved unit) for unit routes mounted outside it. */
  unitAuth: preHandlerHookHandler;
  /** This fleet app's metrics (metrics/, issue 45): what `/metrics` serves. */
  metrics: FleetMetrics;
}

/** A fleet app's Prometheus registry and the unit API's instrument, made by server.ts (metrics/registry.ts). */
export interface FleetMetrics {
  registry: Registry;
  /** A batch of events stored (`POST /events`), in seconds. */
  observeIngest(seconds: number): void;
}

/** One feature as the composition mounts it; every part but the name is optional. */
export interface FleetFeature {
  name: string;
  /** Routes outside the dashboard (public pages, the service's callbacks, unit-facing lists). */
  register?(app: FastifyInstance, ctx: FleetContext, tools: FleetPluginTools): Promise<void>;
  /** Pages inside the dashboard (login, CSRF and roles already in place). */
  pages?(web: FastifyInstance, ctx: FleetContext, t: DashboardTools, p: PageTools): Promise<void> | void;
  /** Its entries in the dashboard's nav, in order. */
  nav?: [string, string][];
}
