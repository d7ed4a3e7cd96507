/**
 * Scheduled jobs of the fleet server and the lock that keeps each one to a single fleet process.
 *
 * On PostgreSQL several fleet processes share one database, so a job takes a session-level advisory lock
 * (`pg_try_advisory_lock`) on one pinned connection for as long as it runs; a process that finds the lock
 * taken skips that run (another process is doing it). A crashed holder's connection closes and the lock is
 * released by PostgreSQL. On SQLite there is one fleet process, and croner's `protect` already prevents a
 * job from overlapping itself.
 */
import type { FleetContext } from "../context.js";
import { releaseJobLock, tryJobLock } from "./store.js";

export { LOCK_NAMESPACE } from "./store.js";

export const JOB_KEYS = {
  reconcile: 1,
  planCycle: 2,
  invoiceCycle: 3,
} as const;
export type JobName = keyof typeof JOB_KEYS;

/**
 * Runs `fn` while holding the job's lock; `{ran: false}` when another process holds it (PostgreSQL). The
 * lock is released when `fn` settles, also when it throws (the error is rethrown).
 */
export async function withJobLock<T>(
  ctx: FleetContext,
  job: JobName,
  fn: () => Promise<T>,
): Promise<{ ran: true; value: T } | { ran: false }> {
  if (ctx.dialect !== "postgres") return { ran: true, value: await fn() };
  const key = JOB_KEYS[job];
  return ctx.db.connection().execute(async (conn) => {
    if (!(await tryJobLock(conn, key))) {
      ctx.logger.info({ job }, "job skipped: another fleet process is running it");
      return { ran: false } as const;
    }
    try {
      return { ran: true, value: await fn() } as const;
    } finally {
      await releaseJobLock(conn, key);
    }
  });
}

/** `YYYY-MM` of the month before the one `day` (`YYYY-MM-DD`) is in. */
export function previousMonth(day: string): string {
  const y = Number(day.slice(0, 4));
  const m = Number(day.slice(5, 7));
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, "0")}`;
}
