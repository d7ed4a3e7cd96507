/**
 * Signed bundles on the fleet: a manager uploads a bundle made and signed elsewhere (`vendd bundle create`
 * / `sign`; the fleet never holds a signing key), the fleet stores it, and each unit pulls the newest one
 * whose targets name it (`GET /bundle`, conditional on its ETag, the bundle's SHA-256). Rollout state per
 * unit: `pending` when the unit first fetched it, then `applied` or `rolledBack` (with the unit's reason)
 * from the unit's version events (ingest/store.ts).
 */
import { createHash } from "node:crypto";
import {
  BundleError,
  MAX_BUNDLE_BYTES,
  parseTrustedComment,
  readBundle,
  verifyBundle,
} from "../../update/bundle.js";
import { MinisignError, type PublicKey, parseSignature } from "../../update/minisign.js";
import type { FleetContext } from "../context.js";

/** Why an upload is refused: the bundle's own codes (src/update/bundle.ts), or the fleet's. */
export class BundleUploadError extends Error {
  override readonly name = "BundleUploadError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface StoredBundle {
  id: string;
  kind: "config" | "release";
  version: string;
  targets: string[];
  expiresAt: number;
  sha256: string;
  size: number;
  /** False when the same bundle (same id and bytes) was already stored. */
  created: boolean;
  /** Whether its signature was checked against the fleet's bundle keys (none configured: false). */
  verified: boolean;
}

/** How refusals name the fleet's bundle keys (never the unit's `updates.publicKeys`). */
export const FLEET_BUNDLE_KEYS = "the fleet's bundle keys (bundleKeys in the fleet config, or --bundle-key)";

/**
 * Checks and stores an uploaded bundle. Refuses (BundleUploadError with a specific code) what is not a whole
 * bundle, an unsigned one, one whose signatures describe another payload, an expired one, and one that
 * reuses a stored bundle's id with other bytes; with `trustedKeys` (default `ctx.bundleKeys`), one not
 * signed by any of them.
 */
export async function storeBundle(
  ctx: FleetContext,
  bytes: Buffer,
  uploadedBy: string,
  trustedKeys: readonly PublicKey[] = ctx.bundleKeys ?? [],
): Promise<StoredBundle> {
  if (bytes.length > MAX_BUNDLE_BYTES)
    throw new BundleUploadError("not_a_bundle", "the bundle is larger than 512 MiB");
  const contents = wrap(() => readBundle(bytes));
  const meta = contents.manifest;
  if (contents.signatures.length === 0)
    throw new BundleUploadError("unsigned", "the bundle has no signature: sign it before uploading");
  for (const text of contents.signatures) {
    let comment: string;
    try {
      comment = parseSignature(text).trustedComment;
    } catch (err) {
      if (err instanceof MinisignError)
        throw new BundleUploadError("bad_signature", `a signature is malformed: ${err.message}`);
      throw err;
    }
    const signedMeta = wrap(() => parseTrustedComment(comment));
    if (signedMeta.id !== meta.id)
      throw new BundleUploadError(
        "another_file",
        `a signature is for another bundle (id ${signedMeta.id}), not this payload (id ${meta.id})`,
      );
    if (
      signedMeta.kind !== meta.kind ||
      signedMeta.version !== meta.version ||
      signedMeta.expires !== meta.expires ||
      signedMeta.targets.join(",") !== meta.targets.join(",")
    )
      throw new BundleUploadError(
        "comment_mismatch",
        "a signature's trusted comment and the payload's manifest disagree",
      );
  }
  // Every upload is checked against the fleet's keys; with none the bundle is stored, marked unverified.
  const verified = trustedKeys.length > 0;
  if (verified)
    wrap(() => verifyBundle(bytes, { keys: trustedKeys, releaseThreshold: 1, keySource: FLEET_BUNDLE_KEYS }));
  const expiresAt = Date.parse(meta.expires);
  const now = ctx.clock.now();
  if (!(expiresAt > now)) throw new BundleUploadError("expired", `the bundle expired at ${meta.expires}`);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const stored: StoredBundle = {
    id: meta.id,
    kind: meta.kind,
    version: String(meta.version),
    targets: meta.targets,
    expiresAt,
    sha256,
    size: bytes.length,
    created: true,
    verified,
  };
  const result = await ctx.db
    .insertInto("bundles")
    .values({
      id: meta.id,
      kind: meta.kind,
      version: String(meta.version),
      targets: JSON.stringify(meta.targets),
      expires_at: expiresAt,
      sha256,
      size: bytes.length,
      bytes,
      uploaded_by: uploadedBy,
      uploaded_at: now,
      verified: verified ? 1 : 0,
    })
    .onConflict((oc) => oc.column("id").doNothing())
    .executeTakeFirst();
  if (result.numInsertedOrUpdatedRows === 0n) {
    const existing = await ctx.db
      .selectFrom("bundles")
      .select(["sha256", "verified"])
      .where("id", "=", meta.id)
      .executeTakeFirst();
    if (existing?.sha256 !== sha256)
      throw new BundleUploadError("id_taken", `a different bundle with id ${meta.id} is already stored`);
    if (verified && Number(existing.verified) === 0) {
      // Stored unverified before; now checked against the fleet's keys.
      await ctx.db.updateTable("bundles").set({ verified: 1 }).where("id", "=", meta.id).execute();
      dropBundleList(ctx);
    }
    return { ...stored, created: false };
  }
  dropBundleList(ctx);
  ctx.logger.info(
    { bundleId: meta.id, kind: meta.kind, version: meta.version, targets: meta.targets, uploadedBy },
    "bundle stored",
  );
  return stored;
}

function wrap<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof BundleError) throw new BundleUploadError(err.code, err.message);
    throw err;
  }
}

/** Whether a bundle's targets name this unit (its id, or `*`). */
export function targetsUnit(targetsJson: string, unitId: string, fleetName: string | null = null): boolean {
  let targets: unknown;
  try {
    targets = JSON.parse(targetsJson);
  } catch {
    return false;
  }
  return (
    Array.isArray(targets) &&
    targets.some((t) => t === unitId || t === "*" || (fleetName !== null && t === fleetName))
  );
}

/**
 * Issue 41: per bundle that has a rollout, whether this unit may take it now (src/fleet/rollouts
 * rolloutGate, read at the request). A bundle in the map is offered only when true; one not in it goes by
 * its targets, as before rollouts.
 */
export type RolloutGate = ReadonlyMap<string, boolean>;

export interface BundleRef {
  id: string;
  sha256: string;
}

/**
 * The newest unexpired bundle whose targets name this unit or its fleet (the `fleet` its last heartbeat
 * named: the unit's `updates.fleet`), or null.
 */
export async function newestBundleFor(
  ctx: FleetContext,
  unitId: string,
  fleetName: string | null = null,
  gate: RolloutGate = new Map(),
): Promise<BundleRef | null> {
  return newestOf(await loadBundleList(ctx), unitId, fleetName, ctx.clock.now(), gate);
}

interface ListedBundle {
  id: string;
  sha256: string;
  targets: string;
  expires_at: number | null;
}

/** Every stored bundle's id, hash, targets and expiry (not the bytes), newest first. */
function loadBundleList(ctx: FleetContext): Promise<ListedBundle[]> {
  return ctx.db
    .selectFrom("bundles")
    .select(["id", "sha256", "targets", "expires_at"])
    .orderBy("uploaded_at", "desc")
    .orderBy("id", "desc")
    .execute();
}

function newestOf(
  rows: readonly ListedBundle[],
  unitId: string,
  fleetName: string | null,
  now: number,
  gate: RolloutGate,
): BundleRef | null {
  for (const r of rows) {
    if (r.expires_at !== null && r.expires_at <= now) continue;
    const inRollout = gate.get(r.id);
    if (inRollout === undefined ? targetsUnit(r.targets, unitId, fleetName) : inRollout)
      return { id: r.id, sha256: r.sha256 };
  }
  return null;
}

/**
 * How long a fleet process answers heartbeats from its copy of the bundle list before reading it again. An
 * upload through this process is seen at once (storeBundle drops the copy); one through another process of
 * a shared PostgreSQL database within this time, which units polling once a minute never notice.
 */
export const BUNDLE_LIST_TTL_MS = 5_000;

interface BundleListCopy {
  rows: Promise<readonly ListedBundle[]>;
  at: number;
}

const bundleLists = new WeakMap<object, BundleListCopy>();

/**
 * The heartbeat's view of the bundles: the newest one for a unit, from a copy of the list read at most
 * {@link BUNDLE_LIST_TTL_MS} ago (one read for every heartbeat of 10,000 units instead of one each; the
 * heartbeats that arrive while it is read wait for that read). The unit's `GET /bundle` reads the list
 * itself ({@link newestBundleFor}).
 */
export function bundleIndex(ctx: FleetContext): {
  newestFor(unitId: string, fleetName: string | null, gate?: RolloutGate): Promise<BundleRef | null>;
} {
  return {
    async newestFor(unitId, fleetName, gate = new Map()) {
      const now = ctx.clock.now();
      const copy = bundleLists.get(ctx.db);
      if (copy !== undefined && now >= copy.at && now - copy.at < BUNDLE_LIST_TTL_MS)
        return newestOf(await copy.rows, unitId, fleetName, now, gate);
      const fresh: BundleListCopy = { rows: loadBundleList(ctx), at: now };
      bundleLists.set(ctx.db, fresh);
      try {
        return newestOf(await fresh.rows, unitId, fleetName, now, gate);
      } catch (err) {
        if (bundleLists.get(ctx.db) === fresh) bundleLists.delete(ctx.db);
        throw err;
      }
    },
  };
}

/** Drops this process's copy of the bundle list (after an upload). */
function dropBundleList(ctx: FleetContext): void {
  bundleLists.delete(ctx.db);
}

/** The bundle's bytes. */
export async function bundleBytes(ctx: FleetContext, id: string): Promise<Buffer | null> {
  const row = await ctx.db.selectFrom("bundles").select(["bytes"]).where("id", "=", id).executeTakeFirst();
  return row === undefined ? null : Buffer.from(row.bytes);
}

/**
 * Records that a unit fetched a bundle: its rollout row `pending`, unless it already has one; a row a
 * rollout offered (issue 41) becomes `pending` (fetched).
 */
export async function markPending(ctx: FleetContext, bundleId: string, unitId: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .insertInto("rollouts")
    .values({ bundle_id: bundleId, unit_id: unitId, state: "pending", reason: "", updated_at: now })
    .onConflict((oc) =>
      oc
        .columns(["bundle_id", "unit_id"])
        .doUpdateSet({ state: "pending", updated_at: now })
        .where("rollouts.state", "=", "offered"),
    )
    .execute();
}
