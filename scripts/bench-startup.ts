/**
 * Start-up (issue 12): from process start (the bench's `spawn` of `node dist/src/cli/main.js run`) to
 * `READY=1` received on a fake `NOTIFY_SOCKET` (a datagram socket the bench binds, received by
 * `socat -u UNIX-RECV:…`), with the sim board (sim display, BLE, NFC, GPIO) and the VMC simulator on a
 * PTY, the V10 driver against the emulator (in this process), and an existing journal of 100,000 sessions
 * on disk. READY is sent when the journal is recovered, the service reached and the drivers are up. The
 * first start after the journal is built has no clean-close stamp (as after a crash: the start check runs
 * the full quick_check, O(file size)); it is reported apart. The figure is the median of the RUNS starts
 * that follow, each after a clean stop (the stamp holds: no quick_check). Target: ≤ 0.5 s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchFigure } from "./benchFigure.js";
import { buildJournal, sessionCount } from "./benchJournal.js";
import {
  type BenchWorld,
  journalBase,
  percentile,
  round,
  startBenchWorld,
  writeBenchUnit,
} from "./benchRig.js";

const SESSIONS = 100_000;
const RUNS = 5;
const TARGET_MS = 500;

export const BUILT_CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

/** A datagram socket at `path` whose messages arrive as text through `socat` (one line per message). */
export async function notifyReceiver(
  path: string,
): Promise<{ messages: string[]; wait(re: RegExp, ms: number): Promise<number>; close(): Promise<void> }> {
  const child = spawn("socat", ["-u", `UNIX-RECV:${path}`, "-"], { stdio: ["ignore", "pipe", "pipe"] });
  const messages: string[] = [];
  const waiters: { re: RegExp; resolve: (at: number) => void }[] = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (text: string) => {
    const at = performance.now();
    messages.push(text);
    for (const w of [...waiters]) {
      if (w.re.test(text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(at);
      }
    }
  });
  const deadline = Date.now() + 5000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error("socat did not bind the notify socket in 5 s");
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    messages,
    wait(re, ms) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} on the notify socket in ${ms} ms`)), ms);
        waiters.push({
          re,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
    },
    async close() {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    },
  };
}

/**
 * Spawns `vendd run` for the unit; `notifySocket` becomes its NOTIFY_SOCKET. Node options for the daemon
 * come from `extraArgs`, else from `VENDD_BENCH_NODE_ARGS` (space-separated; e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/p` to profile a bench's unit), else are the ones the systemd unit starts node with.
 * The CLI is this checkout's built one, or `VENDD_BENCH_CLI` (e.g. a release's esbuild bundle).
 */
export function spawnDaemon(
  configPath: string,
  secretsPath: string,
  notifySocket: string,
  extraArgs: string[] = benchNodeArgs(),
): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...extraArgs,
      process.env.VENDD_BENCH_CLI || BUILT_CLI,
      "run",
      "--config",
      configPath,
      "--secrets",
      secretsPath,
    ],
    {
      env: { ...process.env, NOTIFY_SOCKET: notifySocket, VENDD_FAULT_POINT: "" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
}

function benchNodeArgs(): string[] {
  const env = process.env.VENDD_BENCH_NODE_ARGS;
  if (env !== undefined) return env.split(" ").filter((a) => a !== "");
  return unitNodeFlags();
}

/**
 * The node options of the systemd unit (systemd/vendd.service): its `NODE_OPTIONS` (an `Environment=` line)
 * and what comes between the node binary and the script in `ExecStart`, so a bench runs the daemon as a
 * unit does. Empty when the file is not there.
 */
export function unitNodeFlags(): string[] {
  const unit = fileURLToPath(new URL("../../systemd/vendd.service", import.meta.url));
  if (!existsSync(unit)) return [];
  const lines = readFileSync(unit, "utf8").split("\n");
  const env = lines
    .map((l) => /^Environment="?NODE_OPTIONS=([^"]*)"?$/.exec(l)?.[1])
    .find((v) => v !== undefined);
  const fromEnv = (env ?? "").split(/\s+/).filter((w) => w.startsWith("--"));
  const line = lines.find((l) => l.startsWith("ExecStart="));
  const words = (line ?? "").slice("ExecStart=".length).trim().split(/\s+/);
  const script = words.findIndex((w) => w.endsWith("/cli/main.js"));
  return [...fromEnv, ...(script > 1 ? words.slice(1, script).filter((w) => w.startsWith("--")) : [])];
}

/** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await gone;
  clearTimeout(timer);
}

/** One start: spawn → READY=1, ms. */
export async function timeToReady(configPath: string, secretsPath: string, dir: string): Promise<number> {
  const socket = join(dir, `notify-${process.hrtime.bigint()}`);
  const receiver = await notifyReceiver(socket);
  let stderr = "";
  const t0 = performance.now();
  const child = spawnDaemon(configPath, secretsPath, socket);
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  try {
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`daemon exited (${code}) before READY:\n${stderr}`))),
    );
    const at = await Promise.race([receiver.wait(/READY=1/, 30_000), exited]);
    return at - t0;
  } finally {
    await stopChild(child);
    await receiver.close();
    rmSync(socket, { force: true });
  }
}

export async function startupTimes(
  world: BenchWorld,
  sessions: number,
  runs: number,
): Promise<{ times: number[]; firstMs: number; sessions: number; buildMs: number }> {
  const dir = mkdtempSync(join(journalBase("disk"), "vendd-bench-startup-"));
  const files = writeBenchUnit(world, dir, { simBoard: true });
  try {
    const t = performance.now();
    await buildJournal(files.journalPath, sessions);
    const buildMs = performance.now() - t;
    const firstMs = await timeToReady(files.configPath, files.secretsPath, dir);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(await timeToReady(files.configPath, files.secretsPath, dir));
    const n = sessionCount(files.journalPath);
    return { times, firstMs, sessions: n, buildMs };
  } finally {
    files.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchStartup(): Promise<BenchFigure[]> {
  const world = await startBenchWorld();
  try {
    const r = await startupTimes(world, SESSIONS, RUNS);
    const best = Math.min(...r.times);
    const median = percentile([...r.times], 50);
    return [
      {
        name: "startup.toReady.median",
        figure: round(median, 1),
        unit: "ms",
        target: `<= ${TARGET_MS}`,
        pass: median <= TARGET_MS,
      },
      { name: "startup.toReady.best", figure: round(best, 1), unit: "ms", target: "-", pass: true },
      {
        name: "startup.toReady.afterCrash",
        figure: round(r.firstMs, 1),
        unit: "ms",
        target: "- (full quick_check)",
        pass: true,
      },
      {
        name: "startup.journalSessions",
        figure: r.sessions,
        unit: "sessions",
        target: `${SESSIONS}`,
        pass: r.sessions === SESSIONS,
      },
      {
        name: "startup.journalBuild",
        figure: round(r.buildMs / 1000, 1),
        unit: "s",
        target: "-",
        pass: true,
      },
    ];
  } finally {
    await world.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchStartup().then(
    (fs) => {
      for (const f of fs) process.stdout.write(`${JSON.stringify(f)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(
        `bench-startup: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
