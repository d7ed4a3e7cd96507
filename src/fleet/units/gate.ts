/**
 * The unit API's gate (units/routes.ts): every request's signature and timestamp checked (fleetAuth.ts), its
 * key's unit and nonce claimed in one statement (db/unitStatements.ts), then judged: an unknown key, a
 * replay, a unit not approved are refused; a body naming another unit than the key's is refused. A heartbeat
 * (and on PostgreSQL a batch of events) is verified here but claimed by its route, in the statement that
 * writes it.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type * as z from "zod";
import {
  fingerprint,
  MAX_SKEW_MS,
  type VerifyResult,
  verifyRequest,
  verifyRequestAsync,
} from "../../core/fleetAuth.js";
import { UNIT_API } from "../../core/fleetWire.js";
import type { FleetContext } from "../context.js";
import type { HotPath, UnitAuthRow } from "../db/unitStatements.js";
import { decode, malformed, refuse } from "./wireReplies.js";

const HEARTBEAT_URL = `${UNIT_API}/heartbeat`;
const EVENTS_URL = `${UNIT_API}/events`;

/** A request whose signature and timestamp were checked (fleetAuth.ts). */
export type Verified = Extract<VerifyResult, { ok: true }>;

export interface Authed {
  publicKey: string;
  unit: UnitAuthRow | null;
}

/**
 * The claim's answer judged: an unknown key, a replay, a unit not approved are refused (true: the
 * request may go on).
 */
export const admitted = (
  req: FastifyRequest,
  reply: FastifyReply,
  publicKey: string,
  unit: UnitAuthRow | null,
  fresh: boolean,
  isEnroll: boolean,
): boolean => {
  if (unit === null && !isEnroll) {
    req.log.warn({ key: fingerprint(publicKey), url: req.url }, "unknown unit key refused");
    refuse(reply, 401, "unknown_key", "this key is not enrolled: run vendd fleet enroll");
    return false;
  }
  if (!fresh) {
    req.log.warn({ key: fingerprint(publicKey), url: req.url }, "replayed unit request refused");
    refuse(reply, 401, "replay", "this request was already received (same nonce)");
    return false;
  }
  if (unit !== null && !isEnroll && unit.status !== "approved") {
    req.log.warn({ unitId: unit.id, status: unit.status, url: req.url }, "unit not approved");
    refuse(
      reply,
      403,
      unit.status,
      unit.status === "pending" ? "this unit's enrolment is not approved yet" : "this unit has been revoked",
    );
    return false;
  }
  return true;
};

/** A body's `unitId` that is not the key's own unit is refused (403); true: it is the key's own. */
export const ownUnit = (
  req: FastifyRequest,
  reply: FastifyReply,
  unit: UnitAuthRow | null,
  body: unknown,
) => {
  const unitId = (body as { unitId?: unknown }).unitId;
  if (unit !== null && typeof unitId === "string" && unitId !== unit.id && !isEnrollReq(req)) {
    req.log.warn({ unitId: unit.id, claimed: unitId }, "unit request for another unit refused");
    refuse(reply, 403, "wrong_unit", "the body names another unit than the signing key's");
    return false;
  }
  return true;
};
export const isEnrollReq = (req: FastifyRequest) => req.url === `${UNIT_API}/enroll`;

/** What the unit API's routes use of the gate: the request's claim, its deferred check, its parsed body. */
export interface UnitGate {
  /** Requests claimed and admitted, with their key and unit. */
  auth: WeakMap<FastifyRequest, Authed>;
  /** Heartbeats verified but not yet claimed: the route claims the nonce as it writes (claimHeartbeat). */
  deferred: WeakMap<FastifyRequest, Verified>;
  claim(req: FastifyRequest, reply: FastifyReply, v: Verified, isEnroll: boolean): Promise<Authed | null>;
  /** The preHandler of every unit route (and of unit routes mounted outside the API's scope). */
  authenticate(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  parsed<T>(
    req: FastifyRequest,
    reply: FastifyReply,
    schema: z.ZodType<T>,
    decoded?: ReturnType<typeof decode<T>>,
  ): { a: Authed; body: T } | null;
}

/**
 * The gate of one unit API scope. `defer` says which requests are claimed by their route: heartbeats when
 * the database claims in the heartbeat's statement, events when it claims in the batch's.
 */
export function unitGate(
  ctx: FleetContext,
  hot: HotPath,
  defer: { heartbeat: boolean; events: boolean },
): UnitGate {
  const auth = new WeakMap<FastifyRequest, Authed>();
  const deferred = new WeakMap<FastifyRequest, Verified>();
  // Where the Ed25519 check runs (about 0.14 ms of CPU a request). On SQLite the fleet is one process, and
  // libuv's thread pool lets the checks use the other cores. On PostgreSQL a fleet scales out by processes,
  // one per core, and there the hop to the pool and back (two thread wake-ups a request) costs more than it
  // saves: in paired bench runs on 2 cores, p99 was lower with the check on the pool for SQLite and on the
  // event loop for PostgreSQL (README, "Fleet on PostgreSQL").
  const verifyOnPool = ctx.dialect === "sqlite";
  /** The key's unit and the nonce claimed (db/unitStatements.ts), then judged; the request's Authed, or null. */
  const claim = async (
    req: FastifyRequest,
    reply: FastifyReply,
    v: Verified,
    isEnroll: boolean,
  ): Promise<Authed | null> => {
    // The key's unit and the nonce in one go (db/unitStatements.ts): the nonce is recorded only for a known key or
    // an enrolment, so a stranger's requests write nothing. Without its own fsync (db/asyncCommit.ts): a nonce
    // lost to a power cut of the fleet host could let a request of the last moments be replayed once;
    // every unit request is idempotent on the fleet.
    const { unit, fresh } = await hot.claimNonce(v.publicKey, v.nonce, v.timestamp + MAX_SKEW_MS, isEnroll);
    if (!admitted(req, reply, v.publicKey, unit, fresh, isEnroll)) return null;
    return { publicKey: v.publicKey, unit };
  };

  const authenticate = async (
    req: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const now = ctx.clock.now();
    const v = verifyOnPool
      ? await verifyRequestAsync(req.method, req.url, req.headers, body, now)
      : verifyRequest(req.method, req.url, req.headers, body, now);
    if (!v.ok) {
      req.log.warn({ code: v.code, url: req.url }, "unit request refused");
      return refuse(reply, 401, v.code, v.message);
    }
    // A heartbeat claims its nonce in the statement that writes it, and on PostgreSQL a batch of
    // events in the statement that stores it (the routes below).
    if (
      req.method === "POST" &&
      ((defer.heartbeat && req.url === HEARTBEAT_URL) || (defer.events && req.url === EVENTS_URL))
    ) {
      deferred.set(req, v);
      return undefined;
    }
    const isEnroll = req.url === `${UNIT_API}/enroll`;
    const a = await claim(req, reply, v, isEnroll);
    if (a === null) return reply;
    auth.set(req, a);
    return undefined;
  };

  /**
   * The request's verified key and unit, and its body parsed with `schema` (or `decoded`, the body a
   * route already parsed with it); null when refused.
   */
  const parsed = <T>(
    req: FastifyRequest,
    reply: FastifyReply,
    schema: z.ZodType<T>,
    decoded?: ReturnType<typeof decode<T>>,
  ): { a: Authed; body: T } | null => {
    const a = auth.get(req);
    if (a === undefined) {
      refuse(reply, 401, "unsigned", "the request is not signed by a unit key");
      return null;
    }
    const r = decoded ?? decode(req, schema);
    if (!r.ok) {
      malformed(req, reply, r.error);
      return null;
    }
    if (!ownUnit(req, reply, a.unit, r.value)) return null;
    return { a, body: r.value };
  };
  return { auth, deferred, claim, authenticate, parsed };
}
