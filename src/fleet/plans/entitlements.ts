/**
 * The fleet's entitlement lists (issue 18): which badge hashes may take plan vends where, within which
 * allowances. Built from active members only (pending, suspended and ended members are absent), signed with
 * the entitlement key (update/entitlements.ts), stored in `plan_entitlements` with an ETag, and served to
 * units at `GET /api/unit/v1/entitlements` behind the fleet core's unit authentication.
 */
import { createHash } from "node:crypto";
import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { DAY_MS } from "../../core/days.js";
import { type EntitlementList, type EntitlementMember, signEntitlements } from "../../update/entitlements.js";
import type { SecretKey } from "../../update/minisign.js";
import { openSecretKeyFile } from "../../update/minisignSecretKey.js";
import type { FleetContext } from "../context.js";
import {
  entitledMembers,
  insertEntitlements,
  latestEntitlements,
  newestEtagRow,
  newestSignedList,
  pruneEntitlements,
} from "./store/entitlements.js";

export const ENTITLEMENTS_PATH = "/api/unit/v1/entitlements";
const DEFAULT_VALIDITY_MS = 7 * DAY_MS;

/**
 * Reads the entitlement secret key (minisign, encrypted) and its passphrase from files. Errors name the
 * file, never its content or the passphrase.
 */
export function loadEntitlementKey(keyFile: string, passphraseFile: string): Promise<SecretKey> {
  return openSecretKeyFile(keyFile, passphraseFile, "entitlement key");
}

/** The unsigned list of entitled (active) members at `now`. */
export async function buildEntitlementList(
  ctx: FleetContext,
  now: number,
  serial: number,
  opts: { badgeSalt: string; validityMs?: number },
): Promise<EntitlementList> {
  const validUntil = now + (opts.validityMs ?? DEFAULT_VALIDITY_MS);
  const rows = await entitledMembers(ctx);
  const members: EntitlementMember[] = rows.map((r) => ({
    badge: r.badge,
    memberId: r.id,
    planId: r.plan_id,
    validFrom: r.activated_at ?? r.created_at,
    validTo: validUntil,
    perDay: { items: r.day_items, amount: r.day_amount },
    perMonth: { items: r.month_items, amount: r.month_amount },
    units: JSON.parse(r.units) as string[],
  }));
  return {
    version: 1,
    serial,
    issuedAt: now,
    validUntil,
    badgeSalt: opts.badgeSalt,
    timeZone: ctx.timeZone,
    members,
  };
}

function contentOf(list: EntitlementList): string {
  const members = list.members.map((m) => ({ ...m, validTo: 0 }));
  return createHash("sha256")
    .update(JSON.stringify({ members, salt: list.badgeSalt, tz: list.timeZone }))
    .digest("hex");
}

/** The ETag of the newest signed entitlement list, or null before the first (every unit heartbeat asks). */
export async function newestEntitlementEtag(ctx: FleetContext): Promise<string | null> {
  const list = await newestEtagRow(ctx);
  return list?.etag ?? null;
}

/**
 * Publishes a new signed list when the entitled members changed since the latest one, or when the latest
 * is past half its validity (units keep a fresh one while offline). Returns true when it published.
 */
export async function publishEntitlements(
  ctx: FleetContext,
  now: number,
  opts: { key: SecretKey; badgeSalt: string; validityMs?: number; force?: boolean },
): Promise<boolean> {
  const latest = await latestEntitlements(ctx);
  const serial = (latest?.serial ?? 0) + 1;
  const list = await buildEntitlementList(ctx, now, serial, opts);
  const content = contentOf(list);
  if (
    !opts.force &&
    latest !== undefined &&
    latest.content === content &&
    now < latest.issued_at + (latest.valid_until - latest.issued_at) / 2
  )
    return false;
  const signed = signEntitlements(list, opts.key);
  const etag = `"${createHash("sha256").update(signed.document).digest("base64url").slice(0, 27)}"`;
  await insertEntitlements(ctx, {
    serial,
    document: signed.document,
    signature: signed.signature,
    etag,
    content,
    issued_at: now,
    valid_until: list.validUntil,
  });
  await pruneEntitlements(ctx, serial);
  ctx.logger.info({ serial, members: list.members.length }, "entitlement list published");
  return true;
}

/**
 * `GET /api/unit/v1/entitlements`: the latest signed list as `{document, signature}` with its ETag; 304 on
 * a matching If-None-Match; 404 while none was published. `auth` is the fleet core's unit preHandler.
 */
export function registerEntitlementRoute(
  app: FastifyInstance,
  ctx: FleetContext,
  auth: preHandlerHookHandler,
): void {
  app.get(ENTITLEMENTS_PATH, { preHandler: auth }, async (req, reply) => {
    const latest = await newestSignedList(ctx);
    if (latest === undefined)
      return reply.code(404).send({ error: { code: "no_list", message: "no entitlement list yet" } });
    reply.header("etag", latest.etag).header("cache-control", "no-cache");
    const inm = req.headers["if-none-match"];
    if (typeof inm === "string" && inm.split(",").some((t) => t.trim() === latest.etag))
      return reply.code(304).send();
    return reply.send({ document: latest.document, signature: latest.signature });
  });
}
