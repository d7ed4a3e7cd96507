/**
 * Fleet test helpers: a fleet context on SQLite or on a test PostgreSQL database, simulated units that sign
 * their requests (fleetAuth.ts) and build outbox events (fleetWire.ts).
 */
import type { FastifyInstance } from "fastify";
import pino from "pino";
import type { Clock } from "../../src/core/clock.js";
import { generateUnitKey, signRequest, type UnitKeyPair } from "../../src/core/fleetAuth.js";
import { type SessionData, UNIT_API, type UnitEvent } from "../../src/core/fleetWire.js";
import type { FleetContext } from "../../src/fleet/context.js";
import { openFleetDb } from "../../src/fleet/database.js";
import type { FleetDb } from "../../src/fleet/db/open.js";

export async function fleetContext(
  target: string,
  clock: Clock,
  timeZone = "UTC",
): Promise<{ ctx: FleetContext; fdb: FleetDb }> {
  const fdb = await openFleetDb(target, { poolSize: 4 });
  const ctx: FleetContext = {
    db: fdb.db,
    lightDb: fdb.light,
    hot: fdb.hot,
    dialect: fdb.dialect,
    clock,
    logger: pino({ level: "silent" }),
    timeZone,
  };
  return { ctx, fdb };
}

export interface SimUnit {
  id: string;
  key: UnitKeyPair;
}

export function simUnit(id: string): SimUnit {
  return { id, key: generateUnitKey() };
}

/** The signed request a unit sends (headers and body), for `app.inject` or `fetch`. */
export function signed(
  key: UnitKeyPair,
  method: "GET" | "POST",
  path: string,
  body: unknown,
  now: number,
): { headers: Record<string, string>; payload: string | undefined; url: string } {
  const url = `${UNIT_API}${path}`;
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const headers = signRequest(key, method, url, payload ?? "", now);
  if (payload !== undefined) headers["content-type"] = "application/json";
  return { headers, payload, url };
}

export async function send(
  app: FastifyInstance,
  key: UnitKeyPair,
  method: "GET" | "POST",
  path: string,
  body: unknown,
  now: number,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; json: unknown; headers: Record<string, unknown>; raw: Buffer }> {
  const r = signed(key, method, path, body, now);
  const res = await app.inject({
    method,
    url: r.url,
    headers: { ...r.headers, ...extraHeaders },
    ...(r.payload === undefined ? {} : { payload: r.payload }),
  });
  let json: unknown = null;
  try {
    json = res.json();
  } catch {
    json = null;
  }
  return { status: res.statusCode, json, headers: res.headers, raw: res.rawPayload };
}

export function session(seq: number, sessionId: string, over: Partial<SessionData> = {}): UnitEvent {
  const closedAt = 1_767_225_600_000 + seq * 60_000; // 2026-01-01T00:00Z + seq minutes
  return {
    seq,
    at: closedAt,
    kind: "session",
    data: {
      sessionId,
      orderId: `o-${sessionId}`,
      paymentId: `p-${sessionId}`,
      driver: "v10",
      flow: "selection",
      item: 12,
      price: 250,
      result: "captured",
      reason: "",
      approved: 250,
      captured: 250,
      refunded: 0,
      currency: "NOK",
      openedAt: closedAt - 30_000,
      closedAt,
      vends: [{ item: 12, price: 250, outcome: "success" }],
      review: false,
      member: null,
      ...over,
    },
  };
}

export function fault(seq: number, message = "VMC link lost"): UnitEvent {
  return {
    seq,
    at: 1_767_225_600_000 + seq,
    kind: "fault",
    data: { code: "vmc.down", state: "raised", message },
  };
}

/** Events `from..to` (inclusive): sessions on even seqs, faults on odd. */
export function events(from: number, to: number, prefix = "s"): UnitEvent[] {
  const out: UnitEvent[] = [];
  for (let s = from; s <= to; s++) out.push(s % 2 === 0 ? session(s, `${prefix}${s}`) : fault(s));
  return out;
}
