import type { CallbackNotifier } from "./callbacks.js";
import { EmulatorInputError } from "./errors.js";
import { type FaultSchedule, parseFaultRule } from "./http/faults.js";
import type { StatsRecorder } from "./stats.js";
import type { EmuClock, EmuRequest, EmuResponse, InterfaceHandler, Ledger } from "./types.js";
import { parseUser, type UserRegistry } from "./users.js";

export const ADMIN_PREFIX = "/_admin";

export interface AdminDeps {
  clock: EmuClock;
  ledger: Ledger;
  faults: FaultSchedule;
  stats: StatsRecorder;
  users: UserRegistry;
  callbacks: CallbackNotifier;
}

function readJson(req: EmuRequest): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(req.body.toString("utf8"));
  } catch {
    throw new EmulatorInputError("body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new EmulatorInputError("body must be a JSON object");
  return value as Record<string, unknown>;
}

type AdminRoute = (req: EmuRequest) => EmuResponse;

/**
 * The emulator's admin API under `/_admin` (no authentication: a loopback test tool): virtual clock, ledger,
 * fault schedules, statistics, users and callback aliases. Documented in src/emulator/README.md.
 */
export function createAdminHandler(d: AdminDeps): InterfaceHandler {
  const routes: Record<string, AdminRoute> = {
    "GET /clock": () => ({
      status: 200,
      body: { now: d.clock.now(), iso: new Date(d.clock.now()).toISOString() },
    }),
    "POST /clock/advance": (req) => {
      const ms = readJson(req).ms;
      if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms < 0)
        throw new EmulatorInputError("ms must be an integer >= 0");
      d.clock.advance(ms);
      return { status: 200, body: { now: d.clock.now() } };
    },
    "GET /ledger": (req) => {
      // Optional `from` (inclusive) / `to` (exclusive), ISO date-times: found by binary search.
      const bound = (name: string, fallback: number): number => {
        const v = req.query.get(name);
        if (v === null) return fallback;
        const ms = Date.parse(v);
        if (Number.isNaN(ms)) throw new EmulatorInputError(`${name} must be an ISO 8601 date-time`);
        return d.ledger.indexAt(ms);
      };
      const all = d.ledger.entries();
      return { status: 200, body: { entries: all.slice(bound("from", 0), bound("to", all.length)) } };
    },
    "GET /faults": () => ({ status: 200, body: { faults: d.faults.list() } }),
    "POST /faults": (req) => {
      d.faults.add(parseFaultRule(readJson(req)));
      return { status: 200, body: { faults: d.faults.list() } };
    },
    "DELETE /faults": () => {
      d.faults.clear();
      return { status: 200, body: { faults: [] } };
    },
    "GET /stats": () => ({ status: 200, body: d.stats.snapshot() }),
    "GET /users": () => ({ status: 200, body: { users: d.users.list() } }),
    "POST /users": (req) => {
      const user = parseUser(readJson(req));
      d.users.add(user);
      return { status: 200, body: user };
    },
    "POST /callbacks": (req) => {
      const { alias, url } = readJson(req);
      if (typeof alias !== "string" || typeof url !== "string")
        throw new EmulatorInputError("alias and url must be strings");
      d.callbacks.register(alias, url);
      return { status: 200, body: { alias, url } };
    },
  };
  return {
    async handle(req: EmuRequest): Promise<EmuResponse | null> {
      if (req.path !== ADMIN_PREFIX && !req.path.startsWith(`${ADMIN_PREFIX}/`)) return null;
      const route = routes[`${req.method} ${req.path.slice(ADMIN_PREFIX.length)}`];
      if (route === undefined)
        return { status: 404, body: { error: "no such admin route", routes: Object.keys(routes) } };
      try {
        return route(req);
      } catch (e: unknown) {
        if (e instanceof EmulatorInputError) return { status: 400, body: { error: e.message } };
        throw e;
      }
    },
  };
}
