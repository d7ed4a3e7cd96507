import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FaultPointError } from "../../src/core/faults.js";
import { createNotifier, loadUnixDgram, watchdogPingMs } from "../../src/core/sdnotify.js";
import { loopStallFromEnv } from "../../src/core/sdnotifyStall.js";

// sd_notify from the daemon's own process (issue 14): the datagram transport against a real receiving
// Unix datagram socket, the fallback to systemd-notify, and the watchdog interval. The daemon-level proof
// (order against recovery, a blocked loop, STOPPING on SIGTERM, the sender's PID) is test/daemon-notify.test.ts.

const silent = pino({ level: "silent" });
const HAVE_DGRAM = loadUnixDgram() !== null;

interface Receiver {
  path: string;
  messages: string[];
  close(): void;
}

/** A bound Unix datagram socket collecting what arrives (unix-dgram, as the daemon sends with it). */
function receiver(dir: string): Receiver {
  const mod: unknown = createRequire(import.meta.url)("unix-dgram");
  const path = join(dir, "notify.sock");
  const messages: string[] = [];
  const createSocket = (mod as { createSocket(t: string, l: (b: Buffer) => void): unknown }).createSocket;
  const s = createSocket("unix_dgram", (buf: Buffer) => messages.push(buf.toString())) as {
    bind(p: string): void;
    close(): void;
  };
  s.bind(path);
  return { path, messages, close: () => s.close() };
}

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

let dir: string | undefined;
afterEach(() => {
  vi.useRealTimers();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("systemd notifier", () => {
  it("is a no-op without NOTIFY_SOCKET: nothing loaded, nothing sent, no watchdog", () => {
    const sent: string[] = [];
    const n = createNotifier({ WATCHDOG_USEC: "1000000" }, silent, {
      datagram: (_p, m) => sent.push(m.toString()),
      spawnNotify: (a) => sent.push(a.join(" ")),
    });
    expect(n.enabled).toBe(false);
    expect(n.transport).toBe("none");
    n.ready("x");
    n.status("y");
    n.stopping();
    n.startWatchdog()();
    expect(sent).toEqual([]);
  });

  it.skipIf(!HAVE_DGRAM)("sends READY+STATUS, STATUS, STOPPING as datagrams from this process", async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-notify-"));
    const r = receiver(dir);
    try {
      const n = createNotifier({ NOTIFY_SOCKET: r.path }, silent);
      expect(n.transport).toBe("datagram");
      n.ready("in service as vm-1");
      n.status("out of service: door open\nsecond line");
      n.stopping();
      await until(() => r.messages.length === 3);
      expect(r.messages).toEqual([
        "READY=1\nSTATUS=in service as vm-1\n",
        "STATUS=out of service: door open second line\n",
        "STOPPING=1\n",
      ]);
    } finally {
      r.close();
    }
  });

  it.skipIf(!HAVE_DGRAM)(
    "a socket nobody listens on: the send fails without throwing, logged once per outage",
    () => {
      dir = mkdtempSync(join(tmpdir(), "vendd-notify-"));
      const warnings: string[] = [];
      const logger = pino({ level: "info" }, { write: (line: string) => warnings.push(line) });
      const n = createNotifier({ NOTIFY_SOCKET: join(dir, "nobody.sock") }, logger);
      const started = Date.now();
      for (let i = 0; i < 5; i++) n.status(`s${i}`);
      expect(Date.now() - started).toBeLessThan(500);
      expect(warnings.filter((w) => w.includes("not delivered"))).toHaveLength(1);
    },
  );

  it("falls back to systemd-notify when unix-dgram is absent, and for an abstract socket", () => {
    for (const [socket, datagram] of [
      ["/run/systemd/notify", null],
      ["@vendd-test", (): void => {}],
    ] as const) {
      const calls: string[][] = [];
      const n = createNotifier({ NOTIFY_SOCKET: socket }, silent, {
        datagram,
        spawnNotify: (a) => calls.push([...a]),
      });
      expect(n.transport).toBe("systemd-notify");
      n.ready("starting");
      n.stopping();
      expect(calls).toEqual([["READY=1", "STATUS=starting"], ["STOPPING=1"]]);
    }
  });

  it("pings WATCHDOG=1 at half of WATCHDOG_USEC from a timer of this loop, until stopped", () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const n = createNotifier({ NOTIFY_SOCKET: "/run/test.sock", WATCHDOG_USEC: "3000000" }, silent, {
      datagram: (_p, m) => sent.push(m.toString()),
    });
    const stop = n.startWatchdog();
    vi.advanceTimersByTime(1499);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(["WATCHDOG=1\n"]);
    vi.advanceTimersByTime(6000);
    expect(sent).toHaveLength(5);
    stop();
    vi.advanceTimersByTime(6000);
    expect(sent).toHaveLength(5);
  });

  it("reads the watchdog interval strictly: half of WATCHDOG_USEC, only for this PID", () => {
    expect(watchdogPingMs({ WATCHDOG_USEC: "30000000" }, 42)).toBe(15_000);
    expect(watchdogPingMs({ WATCHDOG_USEC: "30000000", WATCHDOG_PID: "42" }, 42)).toBe(15_000);
    expect(watchdogPingMs({ WATCHDOG_USEC: "30000000", WATCHDOG_PID: "43" }, 42)).toBeNull();
    expect(watchdogPingMs({ WATCHDOG_USEC: "1000" }, 42)).toBe(1);
    for (const bad of [undefined, "", "0", "-5", "1e6", "12abc", " 100"])
      expect(watchdogPingMs(bad === undefined ? {} : { WATCHDOG_USEC: bad }, 42)).toBeNull();
  });

  it("the stall hook (VENDD_FAULT_STALL_MS) is inert unless set, refuses a bad value, blocks the loop on SIGUSR2", () => {
    const target = new EventEmitter() as unknown as NodeJS.Process;
    expect(loopStallFromEnv({}, target)).toBeNull();
    expect(loopStallFromEnv({ VENDD_FAULT_STALL_MS: "" }, target)).toBeNull();
    for (const bad of ["0", "-1", "1.5", "abc", "600001"])
      expect(() => loopStallFromEnv({ VENDD_FAULT_STALL_MS: bad }, target)).toThrow(FaultPointError);
    const off = loopStallFromEnv({ VENDD_FAULT_STALL_MS: "50" }, target);
    expect(off).not.toBeNull();
    const t0 = Date.now();
    (target as unknown as EventEmitter).emit("SIGUSR2");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(50);
    off?.();
    expect((target as unknown as EventEmitter).listenerCount("SIGUSR2")).toBe(0);
  });
});
