/** The jobs' SQL: PostgreSQL's session-level advisory lock of one job, on one pinned connection (lock.ts). */
import { type Kysely, sql } from "kysely";
import type { FleetDatabase } from "../db/schema.js";

/** The first key of every vendd advisory lock ("vend" in ASCII); the second is the job's number. */
export const LOCK_NAMESPACE = 0x76656e64;

/** Takes the job's lock on `conn` if no session holds it: true when taken. */
export async function tryJobLock(conn: Kysely<FleetDatabase>, key: number): Promise<boolean> {
  const got = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_lock(${LOCK_NAMESPACE}, ${key}) as locked`.execute(conn);
  return got.rows[0]?.locked === true;
}

/** Releases the job's lock held on `conn`. */
export async function releaseJobLock(conn: Kysely<FleetDatabase>, key: number): Promise<void> {
  await sql`select pg_advisory_unlock(${LOCK_NAMESPACE}, ${key})`.execute(conn);
}
