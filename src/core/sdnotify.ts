import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import type { Logger } from "pino";

/**
 * systemd readiness, status and watchdog (reliability.md §3.1): one AF_UNIX datagram of newline-separated
 * `KEY=value` lines to `$NOTIFY_SOCKET`, sent from the daemon's own process, so the unit file can keep
 * `NotifyAccess=main` (only the main PID may say READY or WATCHDOG). Node has no Unix datagram sockets, so
 * the datagram goes through the optional native module `unix-dgram`, loaded lazily; a send never blocks
 * (a non-blocking `sendmsg`, no barrier). Where that module is absent (not built for this machine), or the
 * socket is an abstract one (`@name`, which `unix-dgram` cannot address: it copies the path with strncpy),
 * messages go through a spawned `systemd-notify`, which needs `NotifyAccess=all` (scripts/install.sh then
 * installs a drop-in saying so). Everything is a no-op when `NOTIFY_SOCKET` is unset (development, tests, the
 * demo).
 */
export interface Notifier {
  readonly enabled: boolean;
  ready(status?: string): void;
  status(text: string): void;
  stopping(): void;
  /** Starts `WATCHDOG=1` pings at half of `WATCHDOG_USEC`, from the main event loop; returns stop. */
  startWatchdog(): () => void;
}

/** The systemd notifier, and how its messages leave. */
export interface SystemdNotifier extends Notifier {
  /** `none` (no NOTIFY_SOCKET), `datagram` (from this process) or `systemd-notify` (a child: NotifyAccess=all). */
  readonly transport: NotifyTransport;
}

export type NotifyTransport = "none" | "datagram" | "systemd-notify";

/** Sends one datagram to a Unix socket path at once, or throws. */
export type DatagramSend = (socketPath: string, message: Buffer) => void;

export interface NotifierOptions {
  /**
   * The datagram sender, or null when this process cannot send datagrams (default: `unix-dgram`, or null
   * when it does not load).
   */
  datagram?: DatagramSend | null;
  /** Runs `systemd-notify` with these arguments (default: spawn it, output ignored). */
  spawnNotify?: (args: readonly string[]) => void;
}

/** Shortest ping interval, ms (a WATCHDOG_USEC under 2000 µs). */
const MIN_PING_MS = 1;

export function createNotifier(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  options: NotifierOptions = {},
): SystemdNotifier {
  const socket = env.NOTIFY_SOCKET ?? "";
  const enabled = socket !== "";
  let transport: NotifyTransport = "none";
  let sendLines: (lines: readonly string[]) => void = () => {};
  if (enabled) {
    const datagram = options.datagram === undefined ? loadUnixDgram(logger) : options.datagram;
    const spawnNotify = options.spawnNotify ?? spawnSystemdNotify(logger, env);
    if (datagram !== null && !socket.startsWith("@")) {
      transport = "datagram";
      let failing = false;
      sendLines = (lines) => {
        try {
          datagram(socket, Buffer.from(`${lines.join("\n")}\n`));
          if (failing) logger.info({ socket }, "systemd notify socket reachable again");
          failing = false;
        } catch (err) {
          // Logged once per outage, not once per ping: a missing manager must not flood the log.
          if (!failing) logger.warn({ err, socket }, "systemd notify message not delivered");
          failing = true;
        }
      };
    } else {
      transport = "systemd-notify";
      logger.warn(
        {
          socket,
          why: datagram === null ? "the unix-dgram module is not available" : "abstract notify socket",
        },
        "systemd notifications go through systemd-notify: the unit needs NotifyAccess=all",
      );
      // No --no-block: a message from an exited helper may be misattributed (reliability.md §3.1).
      sendLines = (lines) => spawnNotify(lines);
    }
  }
  return {
    enabled,
    transport,
    ready: (status) =>
      sendLines(status === undefined ? ["READY=1"] : ["READY=1", `STATUS=${oneLine(status)}`]),
    status: (text) => sendLines([`STATUS=${oneLine(text)}`]),
    stopping: () => sendLines(["STOPPING=1"]),
    startWatchdog() {
      const ms = watchdogPingMs(env);
      if (!enabled || ms === null) return () => {};
      const h = setInterval(() => sendLines(["WATCHDOG=1"]), ms);
      return () => clearInterval(h);
    },
  };
}

/**
 * The ping interval: half of `WATCHDOG_USEC`, in ms; null when the watchdog is off (unset, not a positive
 * integer) or meant for another process (`WATCHDOG_PID` names a different PID, sd_watchdog_enabled(3)).
 */
export function watchdogPingMs(env: NodeJS.ProcessEnv, pid: number = process.pid): number | null {
  const raw = env.WATCHDOG_USEC ?? "";
  if (!/^[0-9]+$/.test(raw)) return null;
  const usec = Number(raw);
  if (!Number.isSafeInteger(usec) || usec <= 0) return null;
  const forPid = env.WATCHDOG_PID ?? "";
  if (forPid !== "" && forPid !== String(pid)) return null;
  return Math.max(MIN_PING_MS, Math.floor(usec / 2000));
}

/** A STATUS value is one line: the protocol separates fields by newlines. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, " ");
}

/** `unix-dgram`'s socket, as far as this module uses it (checked at the boundary). */
interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, callback: (err?: Error) => void): void;
  close(): void;
}

function isDgramModule(m: unknown): m is { createSocket(type: "unix_dgram"): unknown } {
  return (
    typeof m === "object" &&
    m !== null &&
    typeof (m as { createSocket?: unknown }).createSocket === "function"
  );
}

function isDgramSocket(s: unknown): s is DgramSocket {
  if (typeof s !== "object" || s === null) return false;
  const r = s as { send?: unknown; close?: unknown };
  return typeof r.send === "function" && typeof r.close === "function";
}

/**
 * The `unix-dgram` sender, or null when the module does not load (it is an optional dependency: a machine
 * without a compiler or a prebuilt binary has none). One socket per message, closed at once, as
 * libsystemd's sd_notify does: nothing stays open to keep the process alive or leak into children.
 */
export function loadUnixDgram(logger?: Logger): DatagramSend | null {
  let mod: unknown;
  try {
    mod = createRequire(import.meta.url)("unix-dgram");
  } catch (err) {
    logger?.debug({ err }, "unix-dgram not loadable");
    return null;
  }
  if (!isDgramModule(mod)) return null;
  const createSocket = mod.createSocket.bind(mod);
  return (socketPath, message) => {
    const s: unknown = createSocket("unix_dgram");
    if (!isDgramSocket(s)) throw new Error("unix-dgram returned no socket");
    let failure: Error | undefined;
    try {
      // The callback runs synchronously with the result of the non-blocking sendmsg.
      s.send(message, 0, message.length, socketPath, (err) => {
        failure = err;
      });
    } finally {
      s.close();
    }
    if (failure !== undefined) throw failure;
  };
}

/** Runs `systemd-notify` with the notifier's environment (its NOTIFY_SOCKET). */
function spawnSystemdNotify(logger: Logger, env: NodeJS.ProcessEnv): (args: readonly string[]) => void {
  return (args) => {
    const child = spawn("systemd-notify", [...args], { stdio: "ignore", env });
    child.on("error", (err) => logger.warn({ err }, "systemd-notify failed"));
  };
}
