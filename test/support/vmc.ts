import type { Logger } from "pino";
import { pino } from "pino";
import { type AdapterController, createAdapterController } from "../../drivers/vmc/adapter/index.js";
import type { VmcEvent } from "../../drivers/vmc/controller.js";
import { socatAvailable, startVmcSimulator, type VmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { systemClock } from "../../src/core/clock.js";

/** PTY tests need socat (Debian package `socat`); CI installs it. */
export const HAVE_SOCAT = socatAvailable();
if (!HAVE_SOCAT)
  process.stderr.write("vmc PTY tests skipped: socat is not installed (apt-get install socat)\n");

/** Collects events into an array and waits for one (bounded). */
export class EventLog {
  readonly events: VmcEvent[] = [];
  private waiters: Array<{ pred: (e: VmcEvent) => boolean; resolve: (e: VmcEvent) => void }> = [];

  push(e: VmcEvent): void {
    this.events.push(e);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(e)) return true;
      w.resolve(e);
      return false;
    });
  }

  types(): string[] {
    return this.events.filter((e) => e.type !== "link").map((e) => e.type);
  }

  /** Resolves with the first event (already seen since index `from`, or future) matching `pred`. */
  wait(pred: (e: VmcEvent) => boolean, timeoutMs = 3000, from = 0): Promise<VmcEvent> {
    const seen = this.events.slice(from).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      this.waiters.push(w);
      setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`event not seen within ${timeoutMs} ms; got ${JSON.stringify(this.events)}`));
      }, timeoutMs).unref();
    });
  }

  waitType(type: VmcEvent["type"], timeoutMs = 3000, from = 0): Promise<VmcEvent> {
    return this.wait((e) => e.type === type, timeoutMs, from);
  }
}

/** Polls `check` every 5 ms until true; bounded by `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** One recorded log entry: its level, message and every field of the line. */
export interface LogEntry {
  level: number;
  msg: string;
  fields: Record<string, unknown>;
}

/** A logger that records every entry (level, message and fields) for assertions. */
export function recordingLogger(): { logger: Logger; lines: LogEntry[] } {
  const lines: LogEntry[] = [];
  const logger = pino(
    { level: "debug" },
    {
      write(s: string) {
        const o = JSON.parse(s) as Record<string, unknown>;
        lines.push({
          level: typeof o.level === "number" ? o.level : -1,
          msg: typeof o.msg === "string" ? o.msg : "",
          fields: o,
        });
      },
    },
  );
  return { logger, lines };
}

export interface PtyRig {
  sim: VmcSimulator;
  ctrl: AdapterController;
  log: EventLog;
  logs: LogEntry[];
  close(): Promise<void>;
}

/** A simulator on a real PTY and an opened driver on the real serialport binding. */
export async function ptyRig(
  opts: { ackRate?: number; linkTimeoutMs?: number; commandTimeoutMs?: number; open?: boolean } = {},
): Promise<PtyRig> {
  const sim = await startVmcSimulator({ ackRate: opts.ackRate ?? 50 });
  const { logger, lines } = recordingLogger();
  const ctrl = createAdapterController({
    path: sim.devicePath,
    currencyCode: "DKK",
    clock: systemClock,
    logger,
    commandTimeoutMs: opts.commandTimeoutMs ?? 1000,
    linkTimeoutMs: opts.linkTimeoutMs ?? 1000,
    reopenMinMs: 20,
    reopenMaxMs: 200,
    presenceCheckMs: 50,
  });
  const log = new EventLog();
  ctrl.onEvent((e) => log.push(e));
  if (opts.open !== false) {
    await ctrl.open();
    await eventually(() => ctrl.readerState === "enabled", 3000, "reader enabled");
  }
  return {
    sim,
    ctrl,
    log,
    logs: lines,
    async close() {
      await ctrl.close();
      await sim.close();
    },
  };
}
