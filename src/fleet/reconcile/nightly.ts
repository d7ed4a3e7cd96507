/**
 * The nightly reconciliation on the fleet server (issue 17): a croner job (default 04:30 in the fleet's time
 * zone, after the payment service's transfers for yesterday are made) reconciles yesterday — or the last
 * `days` days — and stores the result like `vendd fleet reconcile`. Runs never overlap (croner `protect`);
 * a failure is logged (without secrets) and the next night tries again. `vendd fleet serve` starts it.
 */
import { Cron } from "croner";
import { DAY_MS } from "../../core/days.js";
import { ReportingClient } from "../../payment/reporting/client.js";
import { dayOf, type FleetContext } from "../context.js";
import { problems, type ReconResult } from "./match.js";
import { runReconcile } from "./run.js";
import type { ReportingSettings } from "./settings.js";

export interface NightlyOptions {
  /** The reporting settings (settings.ts), or a loader called at each run (picks up a rotated token). */
  settings: ReportingSettings | (() => ReportingSettings);
  /** Cron pattern in the fleet's time zone (default `30 4 * * *`). */
  pattern?: string;
  /** Days reconciled each night, ending yesterday (default 1). */
  days?: number;
  /**
   * Wraps each scheduled run (not `runNow`): the fleet server passes its job lock, so that of several fleet
   * processes on one PostgreSQL database only one reconciles.
   */
  lock?: (run: () => Promise<void>) => Promise<void>;
  /** Called after each run (tests, the dashboard's "last run"). */
  onRun?: (r: { runId: number; result: ReconResult } | { error: string }) => void;
}

export interface NightlyReconcile {
  /** Runs now, as the schedule would. */
  runNow(): Promise<{ runId: number; result: ReconResult } | { error: string }>;
  /** When the next scheduled run is, or null when stopped. */
  nextRun(): Date | null;
  stop(): void;
}

/** `YYYY-MM-DD` minus `n` days. */
function minusDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);
}

export function startNightlyReconcile(ctx: FleetContext, opts: NightlyOptions): NightlyReconcile {
  const days = Math.max(1, Math.floor(opts.days ?? 1));
  let running: Promise<{ runId: number; result: ReconResult } | { error: string }> | null = null;

  const once = async (): Promise<{ runId: number; result: ReconResult } | { error: string }> => {
    const now = ctx.clock.now();
    const today = dayOf(now, ctx.timeZone);
    const to = minusDays(today, 1);
    const from = minusDays(today, days);
    let client: ReportingClient | null = null;
    try {
      const settings = typeof opts.settings === "function" ? opts.settings() : opts.settings;
      client = new ReportingClient({
        ...settings.credentials,
        onRefreshToken: (t) => settings.saveRefreshToken(t),
      });
      const run = await runReconcile(ctx.db, client, {
        from,
        to,
        timeZone: settings.timeZone ?? ctx.timeZone,
        points: settings.points,
        transactionFee: settings.transactionFee ?? null,
        ...(settings.paymentPoints === null ? {} : { paymentPoints: settings.paymentPoints }),
        runAt: now,
      });
      const bad = problems(run.result);
      ctx.logger.info(
        {
          runId: run.runId,
          from,
          to,
          clean: run.result.clean,
          counts: run.result.counts,
          problems: bad.length,
          fetchMs: Math.round(run.fetchMs),
          matchMs: Math.round(run.matchMs),
        },
        run.result.clean ? "reconciliation: everything reconciles" : "reconciliation: differences found",
      );
      const out = { runId: run.runId, result: run.result };
      opts.onRun?.(out);
      return out;
    } catch (e) {
      // Error messages of the client and the settings never carry a secret.
      const error = e instanceof Error ? e.message : String(e);
      ctx.logger.error({ from, to, error }, "reconciliation failed; the next run tries again");
      opts.onRun?.({ error });
      return { error };
    } finally {
      await client?.close();
    }
  };

  const runNow = () => {
    if (running === null) running = once().finally(() => (running = null));
    return running;
  };

  const lock = opts.lock ?? ((run: () => Promise<void>) => run());
  const job = new Cron(opts.pattern ?? "30 4 * * *", { timezone: ctx.timeZone, protect: true }, async () => {
    await lock(async () => {
      await runNow();
    });
  });

  return {
    runNow,
    nextRun: () => job.nextRun(),
    stop: () => job.stop(),
  };
}
