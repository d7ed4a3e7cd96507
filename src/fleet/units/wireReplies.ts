/**
 * The unit API's replies and body handling (units/routes.ts): refusals as WireErrors, bodies parsed with the
 * wire's schemas, the heartbeat's row, the fleet name a unit's last heartbeat named, and bundle ETags.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type * as z from "zod";
import { Heartbeat, parseWire, type WireError } from "../../core/fleetWire.js";
import type { FleetContext } from "../context.js";
import type { HeartbeatRow, UnitAuthRow } from "../db/unitStatements.js";
import { lastHeartbeatOf } from "./store.js";

/** A refusal: `status` with a WireError body. */
export function refuse(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const body: WireError = { error: { code, message } };
  return reply.code(status).send(body);
}

/** A body parsed as JSON and then with `schema` (fleetWire.ts), or why not. */
export function decode<T>(
  req: FastifyRequest,
  schema: z.ZodType<T>,
): { ok: true; value: T } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "");
  } catch {
    return { ok: false, error: "the body is not JSON" };
  }
  return parseWire(schema, json);
}

/** A malformed body's refusal (400), logged with why. */
export function malformed(req: FastifyRequest, reply: FastifyReply, error: string): FastifyReply {
  req.log.warn({ url: req.url, error }, "malformed unit request");
  return refuse(reply, 400, "malformed", error);
}

/** What a heartbeat writes on its unit's row. */
export function heartbeatRow(hb: Heartbeat, now: number): HeartbeatRow {
  return {
    last_seen_at: now,
    last_heartbeat: JSON.stringify(hb),
    config_version: hb.versions.config,
    release_version: hb.versions.release,
    backlog_events: hb.backlog.events,
    backlog_oldest_at: hb.backlog.oldestAt,
    unresolved: hb.unresolved,
  };
}

export function enrolled(reply: FastifyReply, status: UnitAuthRow["status"], fp: string): FastifyReply {
  if (status === "revoked") return refuse(reply, 403, "revoked", "this unit has been revoked");
  return reply.code(status === "approved" ? 200 : 202).send({ status, fingerprint: fp });
}

/** The fleet name the unit's last heartbeat named (its `updates.fleet`), or null. */
export async function fleetNameOf(ctx: FleetContext, unitId: string): Promise<string | null> {
  const lastHeartbeat = await lastHeartbeatOf(ctx, unitId);
  if (lastHeartbeat == null) return null;
  let json: unknown;
  try {
    json = JSON.parse(lastHeartbeat);
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
