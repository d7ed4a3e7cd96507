/** The scheduled jobs of `vendd fleet serve`: nightly reconciliation, plan cycle, monthly invoices. */
import { Cron } from "croner";
import { startAlertJob } from "../alerts/job.js";
import type { FleetConfig } from "../config.js";
import { dayOf, type FleetContext } from "../context.js";
import { runInvoiceCycle } from "../invoices/cycle.js";
import { plansPublisher, runPlanCycle } from "../plans/index.js";
import { startNightlyReconcile } from "../reconcile/nightly.js";
import type { FleetServices } from "../services.js";
import { previousMonth, withJobLock } from "./lock.js";

export interface FleetJobs {
  /** Names of the jobs started. */
  started: string[];
  /** Runs a job now, through its lock, as the schedule would (tests, operators). */
  run(job: "planCycle" | "invoiceCycle"): Promise<boolean>;
  stop(): Promise<void>;
}

/** Starts the croner jobs the configuration asks for (each under its PostgreSQL advisory lock). */
export function startFleetJobs(
  ctx: FleetContext,
  s: FleetServices,
  sched: FleetConfig["schedules"],
): FleetJobs {
  const crons: Cron[] = [];
  const stops: (() => void)[] = [];
  const started: string[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };
  const logged = (job: string) => (e: unknown) => {
    ctx.logger.error(
      { job, error: e instanceof Error ? e.message : String(e) },
      "scheduled job failed; the next run tries again",
    );
    return false;
  };

  if (s.reporting !== undefined && sched.reconcile !== false) {
    const nightly = startNightlyReconcile(ctx, {
      settings: s.reporting,
      pattern: sched.reconcile,
      days: sched.reconcileDays,
      lock: async (run) => {
        await track(withJobLock(ctx, "reconcile", run));
      },
    });
    stops.push(() => nightly.stop());
    started.push("reconcile");
  }

  const planCycle = async (): Promise<boolean> => {
    const plans = s.plans;
    if (plans === undefined) return false;
    const r = await withJobLock(ctx, "planCycle", () =>
      runPlanCycle(ctx, plans.client, ctx.clock.now(), plans.settings, plansPublisher(ctx, plans.settings)),
    );
    if (r.ran) ctx.logger.info({ ...r.value }, "plan cycle done");
    return r.ran;
  };
  const invoiceCycle = async (): Promise<boolean> => {
    const inv = s.invoices;
    if (inv === undefined) return false;
    const now = ctx.clock.now();
    const month = previousMonth(dayOf(now, ctx.timeZone));
    const r = await withJobLock(ctx, "invoiceCycle", () => runInvoiceCycle(ctx, inv.client, month, now));
    if (r.ran)
      ctx.logger.info(
        { month, created: r.value.created.length, empty: r.value.empty.length },
        "monthly invoices done",
      );
    return r.ran;
  };

  if (s.plans !== undefined && sched.planCycleMinutes > 0) {
    crons.push(
      new Cron(`*/${sched.planCycleMinutes} * * * *`, { timezone: ctx.timeZone, protect: true }, async () => {
        await track(planCycle().catch(logged("planCycle")));
      }),
    );
    started.push("planCycle");
  }
  if (s.invoices !== undefined && sched.invoiceDay > 0) {
    const [hh, mm] = sched.invoiceTime.split(":");
    crons.push(
      new Cron(
        `${Number(mm)} ${Number(hh)} ${sched.invoiceDay} * *`,
        { timezone: ctx.timeZone, protect: true },
        async () => {
          await track(invoiceCycle().catch(logged("invoiceCycle")));
        },
      ),
    );
    started.push("invoiceCycle");
  }
  if (s.alerts !== undefined) {
    const alerts = startAlertJob(ctx, s.alerts);
    stops.push(() => void track(alerts.stop()));
    started.push("alerts");
  }
  return {
    started,
    run: (job) => track(job === "planCycle" ? planCycle() : invoiceCycle()),
    async stop() {
      for (const c of crons) c.stop();
      for (const f of stops) f();
      await Promise.allSettled([...inFlight]);
    },
  };
}
