/**
 * The alerts' schedule: an evaluation every `everySeconds` (default 60) through croner, like the fleet's
 * other jobs (src/fleet/jobs/schedule.ts); `protect` keeps a run from overlapping the previous one in this
 * process, the lease (evaluate.ts) keeps it to one process at a time.
 */
import { Cron } from "croner";
import type { FleetContext } from "../context.js";
import { alertEvaluator, type RunResult } from "./evaluate.js";
import type { AlertSettings } from "./settings.js";

export interface AlertJob {
  run(): Promise<RunResult>;
  stop(): Promise<void>;
}

export function startAlertJob(ctx: FleetContext, s: AlertSettings): AlertJob {
  const ev = alertEvaluator(ctx, s);
  let running: Promise<unknown> = Promise.resolve();
  const run = (): Promise<RunResult> => {
    const p = ev.run();
    running = p.catch(() => undefined);
    return p;
  };
  const cron = new Cron("* * * * * *", { interval: s.everySeconds, protect: true }, async () => {
    await run().catch((e: unknown) =>
      ctx.logger.error(
        { job: "alerts", error: e instanceof Error ? e.message : String(e) },
        "alert evaluation failed; the next run tries again",
      ),
    );
  });
  return {
    run,
    async stop() {
      cron.stop();
      await running;
      await ev.close();
    },
  };
}
