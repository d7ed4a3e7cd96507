/** The rollouts feature's tables, created by migration `0010_rollouts` (issue 41); see ./schema.ts. */
import { type Kysely, sql } from "kysely";

/** Migration `0010_rollouts`: rollout plans, the steps units reported, and each unit's phase. */
export async function rolloutsUp(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("rollout_plans")
    .addColumn("bundle_id", "text", (c) => c.primaryKey().references("bundles.id"))
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("current_phase", "integer", (c) => c.notNull())
    .addColumn("phases", "integer", (c) => c.notNull())
    .addColumn("max_failure_pct", "integer", (c) => c.notNull())
    .addColumn("targets", "text", (c) => c.notNull())
    .addColumn("sizes", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addCheckConstraint(
      "rollout_plans_state",
      sql`state in ('running', 'paused', 'halted', 'aborted', 'done')`,
    )
    .execute();
  await db.schema
    .createTable("rollout_steps")
    .addColumn("bundle_id", "text", (c) => c.notNull())
    .addColumn("unit_id", "text", (c) => c.notNull())
    .addColumn("step", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("rollout_steps_pk", ["bundle_id", "unit_id", "step"])
    .execute();
  await db.schema.alterTable("rollouts").addColumn("phase", "integer").execute();
  await db.schema.createIndex("rollouts_by_unit").on("rollouts").column("unit_id").execute();
}
