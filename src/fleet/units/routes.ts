/**
 * The unit-facing API under `/api/unit/v1` (the contract is fleetWire.ts's header comment). Every request is
 * signed by the unit's Ed25519 key (fleetAuth.ts): the signature covers the raw body bytes, so bodies are
 * read as bytes, verified, then parsed with the wire's zod schemas. Replays are refused by recording each
 * (key, nonce) in `nonces` until its timestamp window has passed: a second insert of the same pair is a
 * replay. Only `enroll` accepts a key the fleet does not know; the others need an approved unit, and a
 * body's `unitId` must be the key's own unit.
 */
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preHandlerHookHandler,
} from "fastify";
import type * as z from "zod";
import { type FleetServerFaultPoints, NO_FLEET_SERVER_FAULTS } from "../../core/faults.js";
import {
  fingerprint,
  MAX_SKEW_MS,
  type VerifyResult,
  verifyRequest,
  verifyRequestAsync,
} from "../../core/fleetAuth.js";
import { EnrollRequest, EventBatch, Heartbeat, UNIT_API } from "../../core/fleetWire.js";
import { bundleBytes, bundleIndex, markPending, newestBundleFor } from "../bundles/index.js";
import type { FleetContext } from "../context.js";
import { kyselyHotPath, type UnitAuthRow } from "../db/unitStatements.js";
import { claimAndIngest, type IngestResult, ingestBatch } from "../ingest/index.js";
import { enrol } from "./enrol.js";
import { decode, etagOf, fleetNameOf, heartbeatRow, malformed, matchesEtag, refuse } from "./wireReplies.js";

/** Largest request body the unit API reads: a full batch of 500 sessions is well under it. */
export const UNIT_BODY_LIMIT = 2 * 1024 * 1024;

const HEARTBEAT_URL = `${UNIT_API}/heartbeat`;
const EVENTS_URL = `${UNIT_API}/events`;

/** A request whose signature and timestamp were checked (fleetAuth.ts). */
type Verified = Extract<VerifyResult, { ok: true }>;

interface Authed {
  publicKey: string;
  unit: UnitAuthRow | null;
}

export interface UnitApiOptions {
  faults?: FleetServerFaultPoints;
  /**
   * Plans are configured: the heartbeat answer carries `entitlementsEtag`, the ETag of the newest signed
   * entitlement list (`plan_entitlements`), so units fetch `GET /entitlements` when it changes.
   */
  entitlements?: boolean;
  /**
   * Most enrolments waiting for a manager's approval (default DEFAULT_MAX_PENDING_ENROLMENTS). Past it a
   * new key's enrolment is refused (429) and writes nothing, so strangers cannot fill the approval list or
   * the database; the managers approve or revoke the pending ones to make room.
   */
  maxPendingEnrolments?: number;
}

/** How many enrolments may wait for approval at once, unless the fleet config says otherwise. */
export const DEFAULT_MAX_PENDING_ENROLMENTS = 500;

/** Registers the unit API on `app` (in its own scope: the raw-body JSON parser stays inside it). */
export async function registerUnitApi(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: UnitApiOptions = {},
): Promise<preHandlerHookHandler> {
  const faults = opts.faults ?? NO_FLEET_SERVER_FAULTS;
  const maxPending = opts.maxPendingEnrolments ?? DEFAULT_MAX_PENDING_ENROLMENTS;
  const hot = ctx.hot ?? kyselyHotPath(ctx);
  const claimHeartbeat = hot.claimHeartbeat?.bind(hot);
  /** Whether a batch of events may claim its nonce in the statement that stores it (ingest.ts claimAndIngest). */
  const claimsWithEvents = ctx.hot?.claimIngestRun !== undefined;
  // Where the Ed25519 check runs (about 0.14 ms of CPU a request). On SQLite the fleet is one process, and
  // libuv's thread pool lets the checks use the other cores. On PostgreSQL a fleet scales out by processes,
  // one per core, and there the hop to the pool and back (two thread wake-ups a request) costs more than it
  // saves: in paired bench runs on 2 cores, p99 was lower with the check on the pool for SQLite and on the
  // event loop for PostgreSQL (README, "Fleet on PostgreSQL").
  const verifyOnPool = ctx.dialect === "sqlite";
  const bundles = bundleIndex(ctx);
  let unitAuth: preHandlerHookHandler | null = null;
  await app.register(
    async (api) => {
      const auth = new WeakMap<FastifyRequest, Authed>();
      /** Heartbeats verified but not yet claimed: the route claims the nonce as it writes (claimHeartbeat). */
      const deferred = new WeakMap<FastifyRequest, Verified>();
      api.removeAllContentTypeParsers(); // JSON only (415 for anything else), kept as bytes
      api.addContentTypeParser(
        "application/json",
        { parseAs: "buffer", bodyLimit: UNIT_BODY_LIMIT },
        (_req, body, done) => done(null, body),
      );
      api.setErrorHandler((err: FastifyError, req, reply) => {
        const status =
          typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500
            ? err.statusCode
            : 500;
        if (status === 500) req.log.error({ err }, "unit API request failed");
        else req.log.warn({ code: err.code, url: req.url }, "unit API request refused");
        return refuse(
          reply,
          status,
          status === 500 ? "internal" : "bad_request",
          status === 500 ? "the fleet could not process the request" : err.message,
        );
      });

      /**
       * The claim's answer judged: an unknown key, a replay, a unit not approved are refused (true: the
       * request may go on).
       */
      const admitted = (
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
            unit.status === "pending"
              ? "this unit's enrolment is not approved yet"
              : "this unit has been revoked",
          );
          return false;
        }
        return true;
      };

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
        const { unit, fresh } = await hot.claimNonce(
          v.publicKey,
          v.nonce,
          v.timestamp + MAX_SKEW_MS,
          isEnroll,
        );
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
          ((claimHeartbeat !== undefined && req.url === HEARTBEAT_URL) ||
            (claimsWithEvents && req.url === EVENTS_URL))
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
      api.addHook("preHandler", authenticate);
      // For unit routes mounted outside this scope (GET /entitlements): the same signature, nonce and status checks.
      unitAuth = authenticate;

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
      /** A body's `unitId` that is not the key's own unit is refused (403); true: it is the key's own. */
      const ownUnit = (req: FastifyRequest, reply: FastifyReply, unit: UnitAuthRow | null, body: unknown) => {
        const unitId = (body as { unitId?: unknown }).unitId;
        if (unit !== null && typeof unitId === "string" && unitId !== unit.id && !isEnrollReq(req)) {
          req.log.warn({ unitId: unit.id, claimed: unitId }, "unit request for another unit refused");
          refuse(reply, 403, "wrong_unit", "the body names another unit than the signing key's");
          return false;
        }
        return true;
      };
      const isEnrollReq = (req: FastifyRequest) => req.url === `${UNIT_API}/enroll`;

      api.post("/enroll", async (req, reply) => {
        const p = parsed(req, reply, EnrollRequest);
        if (p === null) return reply;
        return enrol(ctx, req, reply, p.a, p.body, maxPending);
      });

      api.post("/events", async (req, reply) => {
        let unit: UnitAuthRow;
        let events: EventBatch["events"];
        let r: IngestResult | null = null;
        const v = deferred.get(req);
        const d = v === undefined ? null : decode(req, EventBatch);
        const c =
          v === undefined || d === null || !d.ok
            ? null
            : await claimAndIngest(
                ctx,
                { publicKey: v.publicKey, nonce: v.nonce, expiresAt: v.timestamp + MAX_SKEW_MS },
                d.value.unitId,
                d.value.events,
                faults,
              );
        if (v !== undefined && d?.ok === true && c !== null) {
          // The claim and the batch in one statement (ingest.ts claimAndIngest), judged as every claim is.
          if (!admitted(req, reply, v.publicKey, c.unit, c.fresh, false) || c.unit === null) return reply;
          if (!ownUnit(req, reply, c.unit, d.value)) return reply;
          unit = c.unit;
          events = d.value.events;
          r = c.result;
        } else {
          if (v !== undefined) {
            // Claimed on its own first (a malformed body too, so every refusal comes in the same order).
            const a = await claim(req, reply, v, false);
            if (a === null) return reply;
            auth.set(req, a);
          }
          const p = parsed(req, reply, EventBatch, d ?? undefined);
          if (p === null || p.a.unit === null) return reply;
          unit = p.a.unit;
          events = p.body.events;
        }
        r ??= await ingestBatch(ctx, unit.id, events, faults, unit.committed_seq);
        if (r.pastGap > 0)
          ctx.logger.info(
            { unitId: unit.id, committed: r.committed, pastGap: r.pastGap },
            "batch past a gap",
          );
        return reply.send({ committed: r.committed });
      });

      api.post("/heartbeat", async (req, reply) => {
        const now = ctx.clock.now();
        let unitId: string;
        let hb: Heartbeat;
        let committed: number | null;
        const v = deferred.get(req);
        if (v !== undefined && claimHeartbeat !== undefined) {
          // The claim and the write in one statement (db/unitStatements.ts). A malformed body still claims its nonce
          // first, so every refusal is the one any other route gives, in the same order.
          const r = decode(req, Heartbeat);
          if (!r.ok) {
            if ((await claim(req, reply, v, false)) === null) return reply;
            return malformed(req, reply, r.error);
          }
          hb = r.value;
          const c = await claimHeartbeat(
            v.publicKey,
            v.nonce,
            v.timestamp + MAX_SKEW_MS,
            hb.unitId,
            heartbeatRow(hb, now),
          );
          if (!admitted(req, reply, v.publicKey, c.unit, c.fresh, false) || c.unit === null) return reply;
          if (!ownUnit(req, reply, c.unit, hb)) return reply;
          unitId = c.unit.id;
          committed = c.committed;
        } else {
          const p = parsed(req, reply, Heartbeat);
          if (p === null || p.a.unit === null) return reply;
          hb = p.body;
          unitId = p.a.unit.id;
          // One statement: the update answers the committed seq (RETURNING, on both dialects).
          committed = await hot.heartbeat(unitId, heartbeatRow(hb, now));
        }
        if (committed === null) return refuse(reply, 401, "unknown_key", "this unit is no longer enrolled");
        const bundle = await bundles.newestFor(unitId, hb.fleet ?? null);
        const list = opts.entitlements
          ? await ctx.db
              .selectFrom("plan_entitlements")
              .select("etag")
              .orderBy("serial", "desc")
              .limit(1)
              .executeTakeFirst()
          : undefined;
        return reply.send({
          now: ctx.clock.now(),
          committed,
          bundleEtag: bundle === null ? null : etagOf(bundle.sha256),
          ...(opts.entitlements ? { entitlementsEtag: list?.etag ?? null } : {}),
        });
      });

      api.get("/bundle", async (req, reply) => {
        const a = auth.get(req);
        if (a === undefined || a.unit === null) return refuse(reply, 401, "unsigned", "not signed");
        const bundle = await newestBundleFor(ctx, a.unit.id, await fleetNameOf(ctx, a.unit.id));
        if (bundle === null) return refuse(reply, 404, "no_bundle", "no bundle targets this unit");
        await markPending(ctx, bundle.id, a.unit.id);
        const etag = etagOf(bundle.sha256);
        reply.header("etag", etag);
        if (matchesEtag(req.headers["if-none-match"], etag)) return reply.code(304).send();
        const bytes = await bundleBytes(ctx, bundle.id);
        if (bytes === null) return refuse(reply, 404, "no_bundle", "the bundle was removed");
        return reply.type("application/octet-stream").send(bytes);
      });
    },
    // Per-request lines only from warn up: 10,000 units' heartbeats would drown the log at info.
    { prefix: UNIT_API, logLevel: "warn" },
  );
  if (unitAuth === null) throw new Error("unit API did not register");
  return unitAuth;
}
