/** The plans feature's record of the service's callbacks seen (`plan_callbacks`, by digest): replays refused. */
import type { FleetContext } from "../../context.js";

/** Records a callback's digest; true when first seen, false when it was recorded before. */
export async function recordCallback(ctx: FleetContext, digest: string, kind: string): Promise<boolean> {
  const r = await ctx.db
    .insertInto("plan_callbacks")
    .values({ digest, kind, received_at: ctx.clock.now() })
    .onConflict((oc) => oc.column("digest").doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Forgets a callback seen (its digest), so that the service's retry of one not applied is handled as new. */
export async function forgetCallback(ctx: FleetContext, digest: string): Promise<void> {
  await ctx.db.deleteFrom("plan_callbacks").where("digest", "=", digest).execute();
}
