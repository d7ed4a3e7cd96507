import { FaultPointError } from "./faults.js";

/**
 * `VENDD_FAULT_STALL_MS=N`: each SIGUSR2 blocks the event loop for N ms (a busy wait on the main thread), so
 * the notify test can show that a blocked loop stops the systemd watchdog pings. Inert unless set; the unit
 * file unsets it like VENDD_FAULT_POINT. Returns the uninstall function, or null when not armed.
 */
export function loopStallFromEnv(
  env: NodeJS.ProcessEnv,
  target: NodeJS.Process = process,
): (() => void) | null {
  const spec = env.VENDD_FAULT_STALL_MS;
  if (spec === undefined || spec === "") return null;
  const ms = Number(spec);
  if (!/^[0-9]+$/.test(spec) || !Number.isSafeInteger(ms) || ms < 1 || ms > 600_000)
    throw new FaultPointError(
      `VENDD_FAULT_STALL_MS: not a duration in ms (1-600000): ${JSON.stringify(spec)}`,
    );
  const stall = () => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // Busy: the loop runs nothing else meanwhile, timers included.
    }
  };
  target.on("SIGUSR2", stall);
  return () => target.off("SIGUSR2", stall);
}
