/** The plans feature's queries that its routes ran inline: a plan by id, a callback forgotten. */
import type { FleetContext } from "../context.js";

/** The plan `id` (active or not), or undefined. */
export function planById(ctx: FleetContext, id: string) {
  return ctx.db.selectFrom("plans").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Forgets a callback seen (its digest), so that the service's retry of one not applied is handled as new. */
export async function forgetCallback(ctx: FleetContext, digest: string): Promise<void> {
  await ctx.db.deleteFrom("plan_callbacks").where("digest", "=", digest).execute();
}
