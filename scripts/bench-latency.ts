/**
 * Latency a customer feels, at the unit's edges (issue 12), through the real daemon path in this process:
 * `startDaemon` with the MDB adapter driver on the simulator's PTY and the V10 driver against the emulator.
 * Two edges, paired per vend from `node:diagnostics_channel` timestamps:
 * - approval: the service's "Reserved" answer received (`undici:request:headers` of the last status GET
 *   before the approval) → the approval line `C,VEND,<amount>` written to the serial port (the adapter's
 *   `vendd:vmc:written`, after the OS took the bytes);
 * - capture: `c,VEND,SUCCESS` read from the serial port (`vendd:vmc:line`) → the capture request's headers
 *   written to the socket (`undici:client:sendHeaders`).
 * Run with the journal on tmpfs (fsync nearly free) and on disk, where the fsync cost of that disk is
 * measured too (the same write + fsync SQLite's WAL commit does). Targets: p99 < 2 ms on tmpfs; < 2 ms + one
 * fsync on disk. The emulator and simulator share this process: idle at the measured moments (the service
 * has answered; the VMC has not yet been told), but their timers add some noise.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import {
  SERIAL_LINE_CHANNEL,
  SERIAL_WRITTEN_CHANNEL,
  type SerialEdgeMessage,
} from "../drivers/vmc/adapter/serialLink.js";
import { loadConfig } from "../src/config/load.js";
import { createLogger } from "../src/core/log.js";
import { createNotifier } from "../src/core/sdnotify.js";
import { startDaemon } from "../src/daemon/daemon.js";
import type { BenchFigure } from "./benchFigure.js";
import {
  type BenchWorld,
  instantVend,
  journalBase,
  percentile,
  round,
  startBenchWorld,
  until,
  writeBenchUnit,
} from "./benchRig.js";

const VENDS = 300;
const WARMUP = 20;
const TARGET_MS = 2;

interface UndiciRequestLike {
  method?: unknown;
  path?: unknown;
}

function requestOf(m: unknown): UndiciRequestLike | null {
  if (typeof m !== "object" || m === null || !("request" in m)) return null;
  const r: unknown = m.request;
  return typeof r === "object" && r !== null ? r : null;
}

function edgeOf(m: unknown): SerialEdgeMessage | null {
  if (typeof m !== "object" || m === null || !("line" in m) || !("at" in m)) return null;
  return typeof m.line === "string" && typeof m.at === "number" ? { line: m.line, at: m.at } : null;
}

/** Pairs the edge timestamps; `approval` and `capture` samples in ms. */
class EdgeProbe {
  readonly approval: number[] = [];
  readonly capture: number[] = [];
  recording = false;
  private lastStatusAt: number | null = null;
  private successAt: number | null = null;
  private readonly subs: [string, (m: unknown) => void][] = [
    [
      "undici:request:headers",
      (m) => {
        const r = requestOf(m);
        if (r?.method === "GET" && typeof r.path === "string" && /^\/v10\/payments\/[^/?]+$/.test(r.path))
          this.lastStatusAt = performance.now();
      },
    ],
    [
      "undici:client:sendHeaders",
      (m) => {
        const r = requestOf(m);
        if (r?.method !== "POST" || typeof r.path !== "string" || !r.path.endsWith("/capture")) return;
        const at = performance.now();
        if (this.successAt !== null && this.recording) this.capture.push(at - this.successAt);
        this.successAt = null;
      },
    ],
    [
      SERIAL_WRITTEN_CHANNEL,
      (m) => {
        const e = edgeOf(m);
        if (e === null || !/^C,VEND,\d/.test(e.line)) return;
        if (this.lastStatusAt !== null && this.recording) this.approval.push(e.at - this.lastStatusAt);
        this.lastStatusAt = null;
      },
    ],
    [
      SERIAL_LINE_CHANNEL,
      (m) => {
        const e = edgeOf(m);
        if (e?.line.startsWith("c,VEND,SUCCESS")) this.successAt = e.at;
      },
    ],
  ];

  constructor() {
    for (const [name, fn] of this.subs) subscribe(name, fn);
  }

  close(): void {
    for (const [name, fn] of this.subs) unsubscribe(name, fn);
  }
}

/** Median time of a 4 KiB write + fsync in `dir` (what one WAL commit costs that disk), ms. */
export function fsyncCostMs(dir: string, rounds = 50): number {
  const path = join(dir, "fsync-probe");
  const fd = openSync(path, "w");
  const page = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      writeSync(fd, page, 0, page.length, (i % 16) * 4096);
      fsyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  return percentile(times, 50);
}

async function runOn(
  world: BenchWorld,
  medium: "tmpfs" | "disk",
  vends: number,
): Promise<{ approval: number[]; capture: number[]; fsyncMs: number; denied: number }> {
  const dir = mkdtempSync(join(journalBase(medium), "vendd-bench-latency-"));
  const files = writeBenchUnit(world, dir);
  const fsyncMs = fsyncCostMs(dir);
  const loaded = loadConfig(files.configPath, { secretsFile: files.secretsPath });
  // The daemon's own logger at its configured level (info), written synchronously as on a unit, to /dev/null.
  const logger = createLogger({
    level: loaded.config.logging.level,
    destination: pino.destination({ dest: "/dev/null", sync: true }),
  });
  const probe = new EdgeProbe();
  const daemon = await startDaemon(loaded, { logger, notifier: createNotifier({}, logger) });
  let denied = 0;
  try {
    if (!(await until(() => daemon.status().inService, 20_000)))
      throw new Error("unit not in service in 20 s");
    for (let i = 0; i < WARMUP + vends; i++) {
      probe.recording = i >= WARMUP;
      const r = await instantVend(world, files.beaconId, 1 + (i % 9), 100 + (i % 50));
      if (r === "stuck") throw new Error(`vend ${i} stuck (${medium})`);
      if (r === "denied") denied++;
    }
    return { approval: probe.approval, capture: probe.capture, fsyncMs, denied };
  } finally {
    probe.close();
    await daemon.stop();
    files.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

function figures(
  medium: "tmpfs" | "disk",
  r: { approval: number[]; capture: number[]; fsyncMs: number },
): BenchFigure[] {
  const limit = medium === "tmpfs" ? TARGET_MS : TARGET_MS + r.fsyncMs;
  const target =
    medium === "tmpfs" ? `p99 < ${TARGET_MS}` : `p99 < ${TARGET_MS} + one fsync (${round(limit, 2)})`;
  const out: BenchFigure[] = [];
  for (const [edge, samples] of [
    ["reservedToApproval", r.approval],
    ["vendSuccessToCapture", r.capture],
  ] as const) {
    const p99 = percentile(samples, 99);
    out.push(
      {
        name: `latency.${edge}.${medium}.p50`,
        figure: round(percentile(samples, 50)),
        unit: "ms",
        target: "-",
        pass: true,
      },
      { name: `latency.${edge}.${medium}.p99`, figure: round(p99), unit: "ms", target, pass: p99 < limit },
      {
        name: `latency.${edge}.${medium}.samples`,
        figure: samples.length,
        unit: "vends",
        target: "-",
        pass: true,
      },
    );
  }
  out.push({
    name: `latency.fsync.${medium}`,
    figure: round(r.fsyncMs),
    unit: "ms",
    target: "-",
    pass: true,
  });
  return out;
}

export async function benchLatency(vends = VENDS): Promise<BenchFigure[]> {
  const world = await startBenchWorld();
  try {
    const out: BenchFigure[] = [];
    for (const medium of ["tmpfs", "disk"] as const) {
      const r = await runOn(world, medium, vends);
      out.push(...figures(medium, r));
      out.push({
        name: `latency.denied.${medium}`,
        figure: r.denied,
        unit: "vends",
        target: "0",
        pass: r.denied === 0,
      });
    }
    return out;
  } finally {
    await world.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? VENDS);
  benchLatency(n).then(
    (fs) => {
      for (const f of fs) process.stdout.write(`${JSON.stringify(f)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(
        `bench-latency: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
