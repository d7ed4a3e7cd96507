import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";

export interface HousekeepingOptions {
  clock: Clock;
  /** Time between rounds, ms. */
  intervalMs: number;
  signal: AbortSignal;
  logger: Logger;
  /** True when no sale is in progress. */
  idle(): boolean;
  /** Settles what the journal left unresolved. */
  sweep(): Promise<void>;
  /** TRUNCATE checkpoint; true when the WAL was truncated. */
  checkpoint(): boolean;
  /** Retention: deletes old settled sessions; returns how many. */
  retain(): number;
}

/**
 * The daemon's periodic work, run only while the unit is idle: the sweeper, retention, then a TRUNCATE checkpoint
 * whose result is checked (a busy checkpoint truncates nothing; reliability.md §1.3). Resolves when the
 * signal aborts. Its timer is also what keeps a unit with no device activity alive.
 */
export async function startHousekeeping(opts: HousekeepingOptions): Promise<void> {
  while (!opts.signal.aborted) {
    try {
      await opts.clock.sleep(opts.intervalMs, opts.signal);
    } catch {
      return;
    }
    if (!opts.idle()) continue;
    try {
      await opts.sweep();
      if (!opts.idle()) continue;
      const removed = opts.retain();
      if (removed > 0) opts.logger.info({ removed }, "retention removed old sessions");
      if (!opts.checkpoint()) opts.logger.warn("WAL checkpoint was busy; nothing truncated");
    } catch (err) {
      opts.logger.error({ err }, "housekeeping round failed");
    }
  }
}
