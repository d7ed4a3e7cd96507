/**
 * `POST /enroll` once its request is verified, claimed and parsed (units/routes.ts): a key already enrolled
 * answers its unit's status (409 for another unit id); a new key is stored as a pending unit unless
 * `maxPending` enrolments already wait for a manager's approval (429, nothing written) or the unit id is
 * another key's (409). A manager approves or revokes it on the dashboard or with `vendd fleet approve` / `revoke`.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { fingerprint } from "../../core/fleetAuth.js";
import type { EnrollRequest } from "../../core/fleetWire.js";
import type { FleetContext } from "../context.js";
import type { UnitAuthRow } from "../db/unitStatements.js";
import { insertPendingUnit, pendingCount, unitOfKey } from "./store.js";
import { enrolled, refuse } from "./wireReplies.js";

export async function enrol(
  ctx: FleetContext,
  req: FastifyRequest,
  reply: FastifyReply,
  a: { publicKey: string; unit: UnitAuthRow | null },
  body: EnrollRequest,
  maxPending: number,
): Promise<FastifyReply> {
  const fp = fingerprint(a.publicKey);
  if (a.unit !== null) {
    if (a.unit.id !== body.unitId)
      return refuse(reply, 409, "key_taken", `this key is already enrolled as unit ${a.unit.id}`);
    return enrolled(reply, a.unit.status, fp);
  }
  const pending = { n: await pendingCount(ctx) };
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
  const inserted = await insertPendingUnit(ctx, {
    id: body.unitId,
    publicKey: a.publicKey,
    fingerprint: fp,
    label: body.label,
  });
  if (!inserted) {
    const mine = await unitOfKey(ctx, a.publicKey);
    if (mine !== undefined && mine.id === body.unitId) return enrolled(reply, mine.status, fp);
    req.log.warn({ unitId: body.unitId, key: fp }, "enrolment for a unit id held by another key");
    return refuse(reply, 409, "id_taken", `unit id ${body.unitId} is enrolled with another key`);
  }
  ctx.logger.info({ unitId: body.unitId, fingerprint: fp }, "unit enrolment pending approval");
  return reply.code(202).send({ status: "pending", fingerprint: fp });
}
