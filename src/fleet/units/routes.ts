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
import { type FleetServerFaultPoints, NO_FLEET_SERVER_FAULTS } from "../../core/faults.js";
import { MAX_SKEW_MS } from "../../core/fleetAuth.js";
import { EnrollRequest, EventBatch, Heartbeat, StepReport, UNIT_API } from "../../core/fleetWire.js";
import type { SecretKey } from "../../update/minisign.js";
import { signUnitValues } from "../../update/unitValues.js";
import { bundleBytes, bundleIndex, markPending, newestBundleFor } from "../bundles/index.js";
import type { FleetContext } from "../context.js";
import { type HotPath, kyselyHotPath, type UnitAuthRow } from "../db/unitStatements.js";
import { claimAndIngest, type IngestResult, ingestBatch } from "../ingest/index.js";
import { newestEntitlementEtag } from "../plans/index.js";
import { recordStep, rolloutGate } from "../rollouts/index.js";
import { valuesDocumentOf, valuesEtagOf } from "../values/index.js";
import { enrol } from "./enrol.js";
import { admitted, ownUnit, type UnitGate, unitGate } from "./gate.js";
import { decode, etagOf, fleetNameOf, heartbeatRow, malformed, matchesEtag, refuse } from "./wireReplies.js";

/** Largest request body the unit API reads: a full batch of 500 sessions is well under it. */
export const UNIT_BODY_LIMIT = 2 * 1024 * 1024;

export interface UnitApiOptions {
  faults?: FleetServerFaultPoints;
  /**
   * Plans are configured: the heartbeat answer carries `entitlementsEtag`, the ETag of the newest signed
   * entitlement list (the plans feature's `newestEntitlementEtag`), so units fetch `GET /entitlements` when
   * it changes.
   */
  entitlements?: boolean;
  /**
   * Most enrolments waiting for a manager's approval (default DEFAULT_MAX_PENDING_ENROLMENTS). Past it a
   * new key's enrolment is refused (429) and writes nothing, so strangers cannot fill the approval list or
   * the database; the managers approve or revoke the pending ones to make room.
   */
  maxPendingEnrolments?: number;
  /** Called with the seconds each stored batch of events took (`POST /events`, the fleet's metrics). */
  onIngest?: (seconds: number) => void;
  /**
   * The fleet's values key (issue 41; `values.keyFile` of the fleet config): the heartbeat answer carries
   * `valuesEtag`, and `GET /values` serves each unit the values held for it, signed for it alone. Absent:
   * neither (the values are still held and edited).
   */
  valuesKey?: SecretKey;
}

/** How many enrolments may wait for approval at once, unless the fleet config says otherwise. */
export const DEFAULT_MAX_PENDING_ENROLMENTS = 500;

/** What the unit API's routes share: the context, the gate, the statements, the bundle list. */
interface UnitRoutes {
  ctx: FleetContext;
  gate: UnitGate;
  hot: HotPath;
  claimHeartbeat: HotPath["claimHeartbeat"];
  faults: FleetServerFaultPoints;
  bundles: ReturnType<typeof bundleIndex>;
  entitlementsEtag: (() => Promise<string | null>) | undefined;
  onIngest: ((seconds: number) => void) | undefined;
  valuesKey: SecretKey | undefined;
}

/** Registers the unit API on `app` (in its own scope: the raw-body JSON parser stays inside it). */
export async function registerUnitApi(
  app: FastifyInstance,
  ctx: FleetContext,
  opts: UnitApiOptions = {},
): Promise<preHandlerHookHandler> {
  const maxPending = opts.maxPendingEnrolments ?? DEFAULT_MAX_PENDING_ENROLMENTS;
  const hot = ctx.hot ?? kyselyHotPath(ctx);
  const claimHeartbeat = hot.claimHeartbeat?.bind(hot);
  /** Whether a batch of events may claim its nonce in the statement that stores it (ingest/store.ts claimAndIngest). */
  const claimsWithEvents = ctx.hot?.claimIngestRun !== undefined;
  const bundles = bundleIndex(ctx);
  let unitAuth: preHandlerHookHandler | null = null;
  await app.register(
    async (api) => {
      const gate = unitGate(ctx, hot, { heartbeat: claimHeartbeat !== undefined, events: claimsWithEvents });
      const u: UnitRoutes = {
        ctx,
        gate,
        hot,
        claimHeartbeat,
        faults: opts.faults ?? NO_FLEET_SERVER_FAULTS,
        bundles,
        entitlementsEtag: opts.entitlements === true ? () => newestEntitlementEtag(ctx) : undefined,
        onIngest: opts.onIngest,
        valuesKey: opts.valuesKey,
      };
      api.removeAllContentTypeParsers(); // JSON only (415 for anything else), kept as bytes
      api.addContentTypeParser(
        "application/json",
        { parseAs: "buffer", bodyLimit: UNIT_BODY_LIMIT },
        (_req, body, done) => done(null, body),
      );
      api.setErrorHandler(unitApiError);
      api.addHook("preHandler", gate.authenticate);
      // For unit routes mounted outside this scope (GET /entitlements): the same signature, nonce and status checks.
      unitAuth = gate.authenticate;

      api.post("/enroll", async (req, reply) => {
        const p = gate.parsed(req, reply, EnrollRequest);
        if (p === null) return reply;
        return enrol(ctx, req, reply, p.a, p.body, maxPending);
      });
      api.post("/events", (req, reply) => postEvents(u, req, reply));
      api.post("/heartbeat", (req, reply) => postHeartbeat(u, req, reply));
      api.get("/bundle", (req, reply) => getBundle(u, req, reply));
      api.get("/values", (req, reply) => getValues(u, req, reply));
      api.post("/steps", async (req, reply) => {
        const p = gate.parsed(req, reply, StepReport);
        if (p === null || p.a.unit === null) return reply;
        if (!ownUnit(req, reply, p.a.unit, p.body)) return reply;
        return reply.send(await recordStep(ctx, p.body));
      });
    },
    // Per-request lines only from warn up: 10,000 units' heartbeats would drown the log at info.
    { prefix: UNIT_API, logLevel: "warn" },
  );
  if (unitAuth === null) throw new Error("unit API did not register");
  return unitAuth;
}

/** A thrown error of a unit route as the wire's refusal: 4xx as Fastify set it, else 500 `internal`. */
function unitApiError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
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
}

/** `POST /events`: a batch stored exactly once (ingest/), its nonce claimed with it where the database can. */
async function postEvents(u: UnitRoutes, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ctx, faults } = u;
  const { deferred, claim, auth, parsed } = u.gate;
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
    // The claim and the batch in one statement (ingest/store.ts claimAndIngest), judged as every claim is.
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
    ctx.logger.info({ unitId: unit.id, committed: r.committed, pastGap: r.pastGap }, "batch past a gap");
  // From the request's arrival: the signature check, the nonce and the batch's statement.
  u.onIngest?.(reply.elapsedTime / 1000);
  return reply.send({ committed: r.committed });
}

/** `POST /heartbeat`: the unit's row updated; the answer names its newest bundle (and entitlement list). */
async function postHeartbeat(u: UnitRoutes, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ctx, hot, claimHeartbeat, bundles, entitlementsEtag, valuesKey } = u;
  const { deferred, claim, parsed } = u.gate;
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
  // The rollouts' state at this request (issue 41): a paused, halted or aborted rollout's bundle is not hinted.
  const bundle = await bundles.newestFor(unitId, hb.fleet ?? null, await rolloutGate(ctx, unitId));
  // The plans feature's query (plans/entitlements.ts), when plans are on.
  const etag = entitlementsEtag === undefined ? undefined : await entitlementsEtag();
  // The values held for this unit (issue 41), when the fleet has a values key to sign them with.
  const valuesEtag = valuesKey === undefined ? undefined : await valuesEtagOf(ctx.db, unitId);
  return reply.send({
    now: ctx.clock.now(),
    committed,
    bundleEtag: bundle === null ? null : etagOf(bundle.sha256),
    ...(entitlementsEtag !== undefined ? { entitlementsEtag: etag ?? null } : {}),
    ...(valuesEtag !== undefined ? { valuesEtag } : {}),
  });
}

/**
 * `GET /values` (issue 41): the values the fleet holds for the signing unit (its groups' and its own), in a
 * document naming it, signed with the values key; conditional on the ETag the heartbeat advertises.
 */
async function getValues(u: UnitRoutes, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ctx, valuesKey } = u;
  const a = u.gate.auth.get(req);
  if (a === undefined || a.unit === null) return refuse(reply, 401, "unsigned", "not signed");
  if (valuesKey === undefined)
    return refuse(reply, 404, "no_values", "this fleet has no values key: it sends no values");
  const { document, etag } = await valuesDocumentOf(ctx.db, a.unit.id, ctx.clock.now());
  reply.header("etag", etag).header("cache-control", "no-cache");
  if (matchesEtag(req.headers["if-none-match"], etag)) return reply.code(304).send();
  return reply.send(signUnitValues(document, valuesKey));
}

/** `GET /bundle`: the newest bundle targeting the unit, conditional on its ETag; marks its rollout pending. */
async function getBundle(u: UnitRoutes, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ctx } = u;
  const { auth } = u.gate;
  const a = auth.get(req);
  if (a === undefined || a.unit === null) return refuse(reply, 401, "unsigned", "not signed");
  const bundle = await newestBundleFor(
    ctx,
    a.unit.id,
    await fleetNameOf(ctx, a.unit.id),
    await rolloutGate(ctx, a.unit.id),
  );
  if (bundle === null) return refuse(reply, 404, "no_bundle", "no bundle targets this unit");
  await markPending(ctx, bundle.id, a.unit.id);
  const etag = etagOf(bundle.sha256);
  reply.header("etag", etag);
  if (matchesEtag(req.headers["if-none-match"], etag)) return reply.code(304).send();
  const bytes = await bundleBytes(ctx, bundle.id);
  if (bytes === null) return refuse(reply, 404, "no_bundle", "the bundle was removed");
  return reply.type("application/octet-stream").send(bytes);
}
