import { spawn } from "node:child_process";
import type { Logger } from "pino";

/**
 * systemd readiness and watchdog (reliability.md §3.1). Node has no AF_UNIX datagram sockets, so messages
 * go through the `systemd-notify` tool, which needs `NotifyAccess=all` in the unit. Everything is a no-op
 * when `NOTIFY_SOCKET` is unset (development, tests, the demo).
 */
export interface Notifier {
  readonly enabled: boolean;
  ready(status?: string): void;
  status(text: string): void;
  stopping(): void;
  /** Starts `WATCHDOG=1` pings at half of `WATCHDOG_USEC`, from the main event loop; returns stop. */
  startWatchdog(): () => void;
}

export function createNotifier(env: NodeJS.ProcessEnv, logger: Logger): Notifier {
  const socket = env.NOTIFY_SOCKET;
  const enabled = socket !== undefined && socket !== "";
  const send = (...lines: string[]) => {
    if (!enabled) return;
    // No --no-block: a message from an exited helper may be misattributed (reliability.md §3.1).
    const child = spawn("systemd-notify", lines, { stdio: "ignore" });
    child.on("error", (err) => logger.warn({ err }, "systemd-notify failed"));
  };
  return {
    enabled,
    ready: (status) => send("READY=1", ...(status ? [`STATUS=${status}`] : [])),
    status: (text) => send(`STATUS=${text}`),
    stopping: () => send("STOPPING=1"),
    startWatchdog() {
      const usec = Number(env.WATCHDOG_USEC ?? "");
      if (!enabled || !Number.isFinite(usec) || usec <= 0) return () => {};
      const h = setInterval(() => send("WATCHDOG=1"), Math.max(1000, Math.floor(usec / 2000)));
      return () => clearInterval(h);
    },
  };
}
