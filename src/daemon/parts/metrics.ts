/**
 * The metrics part (issue 45): with `metrics.textfile` set, the unit's metrics written for node_exporter's
 * textfile collector (../metricsTextfile.ts) at start and every `metrics.intervalSeconds`, whether or not
 * the unit is in service (an out-of-service unit is what the file must show). A write that fails (the
 * directory missing, the disk full) is logged once until one succeeds again, and retried at the next round;
 * it never stops the unit.
 */
import { unitMetricsText, writeMetricsTextfile } from "../metricsTextfile.js";
import type { Part } from "./part.js";

export function metricsPart(): Part<{ textfile: string | null; written: number; failing: boolean }> {
  let loop: Promise<void> = Promise.resolve();
  let textfile: string | null = null;
  let written = 0;
  let failing = false;
  return {
    name: "metrics",
    start(ctx) {
      const { config, clock, devices } = ctx;
      const path = config.metrics.textfile;
      textfile = path;
      if (path === null) return;
      const logger = ctx.logger.child({ component: "metrics" });
      const startedAt = clock.now();
      const writeOnce = async () => {
        try {
          const text = await unitMetricsText({
            version: ctx.deps.version ?? "unknown",
            status: ctx.state.status(),
            unresolved: devices.journal.unresolved().length,
            outbox: config.fleet === undefined ? null : devices.journal.outboxStats(),
            startedAt,
            now: clock.now(),
          });
          writeMetricsTextfile(path, text);
          written++;
          if (failing) logger.info({ textfile: path }, "metrics textfile written again");
          failing = false;
        } catch (err) {
          if (!failing) {
            const code = err instanceof Error && "code" in err ? String(err.code) : "error";
            logger.warn(
              { textfile: path, code },
              `metrics textfile ${path} cannot be written (${code}): does its directory exist (apt-get install prometheus-node-exporter)? Retried every ${config.metrics.intervalSeconds} s`,
            );
          }
          failing = true;
        }
      };
      const signal = ctx.stopping.signal;
      loop = (async () => {
        await writeOnce();
        while (!signal.aborted) {
          try {
            await clock.sleep(config.metrics.intervalSeconds * 1000, signal);
          } catch {
            return;
          }
          await writeOnce();
        }
      })();
    },
    async stop() {
      await loop;
    },
    status: () => ({ textfile, written, failing }),
  };
}
