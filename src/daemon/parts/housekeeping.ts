/**
 * The housekeeping part (../housekeeping.ts): once the unit is in service, the sweeper, retention (the
 * journal's and the fleet outbox's) and the WAL checkpoint, every minute the unit is idle.
 */

import { DAY_MS } from "../../core/days.js";
import { startHousekeeping } from "../housekeeping.js";
import type { EnginePart } from "./engine.js";
import type { FleetPart } from "./fleet.js";
import type { Part } from "./part.js";

/** Housekeeping interval: sweeper and WAL checkpoint at idle (reliability.md §1.3), ms. */
const HOUSEKEEPING_MS = 60_000;

export function housekeepingPart(engine: EnginePart, fleet: FleetPart): Part<{ running: boolean }> {
  let housekeeping: Promise<void> = Promise.resolve();
  let running = false;
  return {
    name: "housekeeping",
    start(ctx) {
      const { clock, config, devices } = ctx;
      ctx.hooks.onInService((live) => {
        running = true;
        housekeeping = startHousekeeping({
          clock,
          intervalMs: HOUSEKEEPING_MS,
          signal: ctx.stopping.signal,
          logger: ctx.logger.child({ component: "housekeeping" }),
          idle: () => live.current.tag === "idle" && live.failure === null,
          // The sweeper: settles sessions left unsettled, using only the journal's own decisions.
          sweep: async () => {
            await engine.recover();
          },
          checkpoint: () => devices.journal.checkpoint(),
          retain: () => {
            fleet.retain();
            return devices.journal.retain(clock.now() - config.journal.retentionDays * DAY_MS);
          },
        });
      });
    },
    async stop() {
      await housekeeping;
    },
    status: () => ({ running }),
  };
}
