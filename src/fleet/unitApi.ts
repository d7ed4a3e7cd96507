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
import { type FleetServerFaultPoints, NO_FLEET_SERVER_FAULTS } from "../core/faults.js";
import { fingerprint, MAX_SKEW_MS, verifyRequestAsync } from "../core/fleetAuth.js";
import {
  EnrollRequest,
  EventBatch,
  Heartbeat,
  parseWire,
  UNIT_API,
  type WireError,
} from "../core/fleetWire.js";
import { bundleBytes, bundleIndex, markPending, newestBundleFor } from "./bundles.js";
import type { FleetContext } from "./context.js";
import { kyselyHotPath, type UnitAuthRow } from "./db/hot.js";
import { ingestBatch } from "./ingest.js";

/** Largest request body the unit API reads: a full batch of 500 sessions is well under it. */
export const UNIT_BODY_LIMIT = 2 * 1024 * 1024;

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

function refuse(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const body: WireError = { error: { code, message } };
  return reply.code(status).send(body);
}

/** Registers the unit API on `app` (in its own scope: the raw-body JSON parser stays inside it). */
export async function registerUnitApi(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: UnitApiOptions = {},
): Promise<preHandlerHookHandler> {
  const faults = opts.faults ?? NO_FLEET_SERVER_FAULTS;
  const maxPending = opts.maxPendingEnrolments ?? DEFAULT_MAX_PENDING_ENROLMENTS;
  const hot = ctx.hot ?? kyselyHotPath(ctx);
  const bundles = bundleIndex(ctx);
  let unitAuth: preHandlerHookHandler | null = null;
  await app.register(
    async (api) => {
      const auth = new WeakMap<FastifyRequest, Authed>();
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

      const authenticate = async (
        req: FastifyRequest,
        reply: FastifyReply,
      ): Promise<FastifyReply | undefined> => {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const now = ctx.clock.now();
        const v = await verifyRequestAsync(req.method, req.url, req.headers, body, now);
        if (!v.ok) {
          req.log.warn({ code: v.code, url: req.url }, "unit request refused");
          return refuse(reply, 401, v.code, v.message);
        }
        const isEnroll = req.url === `${UNIT_API}/enroll`;
        // The key's unit and the nonce in one go (db/hot.ts): the nonce is recorded only for a known key or
        // an enrolment, so a stranger's requests write nothing. Without its own fsync (db/light.ts): a nonce
        // lost to a power cut of the fleet host could let a request of the last moments be replayed once;
        // every unit request is idempotent on the fleet.
        const { unit, fresh } = await hot.claimNonce(
          v.publicKey,
          v.nonce,
          v.timestamp + MAX_SKEW_MS,
          isEnroll,
        );
        if (unit === null && !isEnroll) {
          req.log.warn({ key: fingerprint(v.publicKey), url: req.url }, "unknown unit key refused");
          return refuse(reply, 401, "unknown_key", "this key is not enrolled: run vendd fleet enroll");
        }
        if (!fresh) {
          req.log.warn({ key: fingerprint(v.publicKey), url: req.url }, "replayed unit request refused");
          return refuse(reply, 401, "replay", "this request was already received (same nonce)");
        }
        if (unit !== null && !isEnroll && unit.status !== "approved") {
          req.log.warn({ unitId: unit.id, status: unit.status, url: req.url }, "unit not approved");
          return refuse(
            reply,
            403,
            unit.status,
            unit.status === "pending"
              ? "this unit's enrolment is not approved yet"
              : "this unit has been revoked",
          );
        }
        auth.set(req, { publicKey: v.publicKey, unit });
        return undefined;
      };
      api.addHook("preHandler", authenticate);
      // For unit routes mounted outside this scope (GET /entitlements): the same signature, nonce and status checks.
      unitAuth = authenticate;

      /** The request's verified key and unit, and its body parsed with `schema`; null when refused. */
      const parsed = <T>(
        req: FastifyRequest,
        reply: FastifyReply,
        schema: z.ZodType<T>,
      ): { a: Authed; body: T } | null => {
        const a = auth.get(req);
        if (a === undefined) {
          refuse(reply, 401, "unsigned", "the request is not signed by a unit key");
          return null;
        }
        let json: unknown;
        try {
          json = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "");
        } catch {
          req.log.warn({ url: req.url }, "malformed unit request: not JSON");
          refuse(reply, 400, "malformed", "the body is not JSON");
          return null;
        }
        const r = parseWire(schema, json);
        if (!r.ok) {
          req.log.warn({ url: req.url, error: r.error }, "malformed unit request");
          refuse(reply, 400, "malformed", r.error);
          return null;
        }
        const unitId = (r.value as { unitId?: unknown }).unitId;
        if (a.unit !== null && typeof unitId === "string" && unitId !== a.unit.id && !isEnrollReq(req)) {
          req.log.warn({ unitId: a.unit.id, claimed: unitId }, "unit request for another unit refused");
          refuse(reply, 403, "wrong_unit", "the body names another unit than the signing key's");
          return null;
        }
        return { a, body: r.value };
      };
      const isEnrollReq = (req: FastifyRequest) => req.url === `${UNIT_API}/enroll`;

      api.post("/enroll", async (req, reply) => {
        const p = parsed(req, reply, EnrollRequest);
        if (p === null) return reply;
        const { a, body } = p;
        const fp = fingerprint(a.publicKey);
        if (a.unit !== null) {
          if (a.unit.id !== body.unitId)
            return refuse(reply, 409, "key_taken", `this key is already enrolled as unit ${a.unit.id}`);
          return enrolled(reply, a.unit.status, fp);
        }
        const pending = await ctx.db
          .selectFrom("units")
          .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
          .where("status", "=", "pending")
          .executeTakeFirstOrThrow();
        if (Number(pending.n) >= maxPending) {
          req.log.warn(
            { unitId: body.unitId, key: fp, pending: Number(pending.n) },
            "enrolment refused: too many pending",
          );
          reply.header("retry-after", "3600");
          return refuse(
            reply,
            429,
            "too_many_pending",
            "too many enrolments are waiting for approval; ask a fleet manager to approve or revoke them, then retry",
          );
        }
        const inserted = await ctx.db
          .insertInto("units")
          .values({
            id: body.unitId,
            public_key: a.publicKey,
            fingerprint: fp,
            label: body.label,
            status: "pending",
            enrolled_at: ctx.clock.now(),
          })
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst();
        if (inserted.numInsertedOrUpdatedRows === 0n) {
          const mine = await ctx.db
            .selectFrom("units")
            .select(["id", "status"])
            .where("public_key", "=", a.publicKey)
            .executeTakeFirst();
          if (mine !== undefined && mine.id === body.unitId) return enrolled(reply, mine.status, fp);
          req.log.warn({ unitId: body.unitId, key: fp }, "enrolment for a unit id held by another key");
          return refuse(reply, 409, "id_taken", `unit id ${body.unitId} is enrolled with another key`);
        }
        ctx.logger.info({ unitId: body.unitId, fingerprint: fp }, "unit enrolment pending approval");
        return reply.code(202).send({ status: "pending", fingerprint: fp });
      });

      api.post("/events", async (req, reply) => {
        const p = parsed(req, reply, EventBatch);
        if (p === null || p.a.unit === null) return reply;
        const r = await ingestBatch(ctx, p.a.unit.id, p.body.events, faults, p.a.unit.committed_seq);
        if (r.pastGap > 0)
          ctx.logger.info(
            { unitId: p.a.unit.id, committed: r.committed, pastGap: r.pastGap },
            "batch past a gap",
          );
        return reply.send({ committed: r.committed });
      });

      api.post("/heartbeat", async (req, reply) => {
        const p = parsed(req, reply, Heartbeat);
        if (p === null || p.a.unit === null) return reply;
        const hb = p.body;
        const unitId = p.a.unit.id;
        // One statement: the update answers the committed seq (RETURNING, on both dialects).
        const committed = await hot.heartbeat(unitId, {
          last_seen_at: ctx.clock.now(),
          last_heartbeat: JSON.stringify(hb),
          config_version: hb.versions.config,
          release_version: hb.versions.release,
          backlog_events: hb.backlog.events,
          backlog_oldest_at: hb.backlog.oldestAt,
          unresolved: hb.unresolved,
        });
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

function enrolled(reply: FastifyReply, status: UnitAuthRow["status"], fp: string): FastifyReply {
  if (status === "revoked") return refuse(reply, 403, "revoked", "this unit has been revoked");
  return reply.code(status === "approved" ? 200 : 202).send({ status, fingerprint: fp });
}

/** The fleet name the unit's last heartbeat named (its `updates.fleet`), or null. */
async function fleetNameOf(ctx: FleetContext, unitId: string): Promise<string | null> {
  const row = await ctx.db
    .selectFrom("units")
    .select("last_heartbeat")
    .where("id", "=", unitId)
    .executeTakeFirst();
  if (row?.last_heartbeat == null) return null;
  let json: unknown;
  try {
    json = JSON.parse(row.last_heartbeat);
  } catch {
    return null;
  }
  const hb = parseWire(Heartbeat, json);
  return hb.ok ? (hb.value.fleet ?? null) : null;
}

export function etagOf(sha256: string): string {
  return `"${sha256}"`;
}

/** `If-None-Match` against one strong ETag (a list, `*`, and weak forms accepted). */
export function matchesEtag(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const values = (Array.isArray(header) ? header.join(",") : header).split(",").map((s) => s.trim());
  return values.some((v) => v === "*" || v === etag || v === `W/${etag}`);
}
