import type { OutboxStore } from "./outbox.js";
import type { Statements } from "./statements.js";

/**
 * Session retention: deletes closed sessions older than `before` (with their events, vends, intents and plan
 * rows) in batches of `batch`, each batch one `drop` transaction, then the loose events. Returns the sessions
 * deleted.
 */
export function retainSessions(
  stmts: Statements,
  drop: <T>(fn: () => T) => T,
  before: number,
  batch: number,
): number {
  let deleted = 0;
  for (;;) {
    const n = drop(() => {
      const ids = stmts.expired.all(before, batch) as { id: string }[];
      for (const { id } of ids) {
        stmts.dropEvents.run(id);
        stmts.dropVends.run(id);
        stmts.dropIntents.run(id);
        stmts.dropPlanSession.run(id);
        stmts.dropSession.run(id);
      }
      return ids.length;
    });
    deleted += n;
    if (n < batch) break;
  }
  drop(() => stmts.dropLooseEvents.run(before));
  return deleted;
}

/**
 * Outbox retention, inside the caller's transaction: deletes delivered events older than `deliveredBefore`,
 * turns undelivered events older than `undeliveredBefore` into tombstones (their seqs kept), and appends a
 * `fault` `outboxOverflow` (at `now()`) when it dropped any.
 */
export function retainOutboxEvents(
  outbox: OutboxStore,
  now: () => number,
  deliveredBefore: number,
  undeliveredBefore: number,
): { deleted: number; dropped: number[] } {
  const deleted = outbox.dropDelivered(deliveredBefore);
  const dropped = outbox.overflow(undeliveredBefore);
  if (dropped.length > 0) {
    const first = Math.min(...dropped);
    const last = Math.max(...dropped);
    outbox.append("fault", now(), {
      code: "outboxOverflow",
      state: "raised",
      message: `${dropped.length} undelivered events (seq ${first}..${last}) dropped: the fleet was unreachable beyond the backlog limit`,
    });
  }
  return { deleted, dropped };
}
