/**
 * Enrolment decisions: a manager approves a pending unit, or revokes a unit (pending or approved). A revoked
 * unit's requests are refused from then on; its events already stored stay. Used by the CLI
 * (`vendd fleet approve|revoke`) and the dashboard's forms alike.
 */
import type { FleetContext } from "../context.js";

export type DecisionResult = "done" | "notFound" | "alreadyRevoked";

export async function approveUnit(ctx: FleetContext, unitId: string, by: string): Promise<DecisionResult> {
  const unit = await ctx.db
    .selectFrom("units")
    .select(["status"])
    .where("id", "=", unitId)
    .executeTakeFirst();
  if (unit === undefined) return "notFound";
  if (unit.status === "revoked") return "alreadyRevoked";
  await ctx.db
    .updateTable("units")
    .set({ status: "approved", decided_by: by, decided_at: ctx.clock.now() })
    .where("id", "=", unitId)
    .where("status", "=", "pending")
    .execute();
  ctx.logger.info({ unitId, by }, "unit approved");
  return "done";
}

export async function revokeUnit(ctx: FleetContext, unitId: string, by: string): Promise<DecisionResult> {
  const result = await ctx.db
    .updateTable("units")
    .set({ status: "revoked", decided_by: by, decided_at: ctx.clock.now() })
    .where("id", "=", unitId)
    .where("status", "!=", "revoked")
    .executeTakeFirst();
  if (result.numUpdatedRows > 0n) {
    ctx.logger.warn({ unitId, by }, "unit revoked");
    return "done";
  }
  const unit = await ctx.db
    .selectFrom("units")
    .select(["status"])
    .where("id", "=", unitId)
    .executeTakeFirst();
  return unit === undefined ? "notFound" : "alreadyRevoked";
}
