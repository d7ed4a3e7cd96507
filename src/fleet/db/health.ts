/** Whether the database answers: the health check's one statement (`GET /healthz`). */
import { type Kysely, sql } from "kysely";
import type { FleetDatabase } from "./schema.js";

/** Resolves when the database answers `select 1`; rejects when it does not. */
export async function pingDatabase(db: Kysely<FleetDatabase>): Promise<void> {
  await sql`select 1`.execute(db);
}
