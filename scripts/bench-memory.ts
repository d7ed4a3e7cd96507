/**
 * Memory over a long run (issue 12): 10,000 selection vends through a `vendd run` child (the built CLI, the
 * MDB adapter driver on the simulator's PTY, the V10 driver against the emulator in this process, info
 * logging to /dev/null, journal on tmpfs), one after the other with an instant customer. The child runs
 * with the unit file's node options (systemd/vendd.service: NODE_OPTIONS) and without the adapter's read
 * pacing (`vmc.readPacingMs: 0`), so a vend takes the unit's own time (~7 ms) instead of two 50 ms paced
 * reads: 10,000 vends in about 1.5 minutes instead of 17. The child's RSS (`VmRSS` of /proc/<pid>/status)
 * is sampled every 500 vends and the series printed, its anonymous part (`RssAnon`: heap, malloc, stacks,
 * without the node binary's file pages) at ready, half way and the end. Targets: RSS at the end ≤ 80 MB;
 * growth from vend 5,000 to vend 10,000 ≤ 1 MB. `node dist/scripts/bench-memory.js [VENDS]`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { notifyReceiver, spawnDaemon, stopChild } from "./bench-startup.js";
import type { BenchFigure } from "./benchFigure.js";
import { instantVend, journalBase, round, startBenchWorld, writeBenchUnit } from "./benchRig.js";

const VENDS = 10_000;
const EVERY = 500;
const END_TARGET_MB = 80;
const GROWTH_TARGET_MB = 1;

/** A `/proc/<pid>/status` field in kB, as MB. */
function statusMb(pid: number, field: "VmRSS" | "RssAnon"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (m?.[1] === undefined) throw new Error(`no ${field} for process ${pid}`);
  return Number(m[1]) / 1024;
}

/** Resident set size of process `pid`, MB (from /proc). */
export function rssMb(pid: number): number {
  return statusMb(pid, "VmRSS");
}

/**
 * The anonymous part of `pid`'s resident set, MB: V8's heap, malloc (SQLite's page cache among it), stacks.
 * The rest of VmRSS is file pages, mostly the node binary's code and read-only data (ICU, V8's snapshot),
 * which the kernel can drop and reload and which every node process on a machine shares.
 */
export function rssAnonMb(pid: number): number {
  return statusMb(pid, "RssAnon");
}

export async function memorySeries(
  vends = VENDS,
  every = EVERY,
): Promise<{ series: { vends: number; rssMb: number; anonMb: number }[]; denied: number; seconds: number }> {
  const world = await startBenchWorld();
  const dir = mkdtempSync(join(journalBase("tmpfs"), "vendd-bench-memory-"));
  const files = writeBenchUnit(world, dir, { readPacingMs: 0 });
  const socket = join(dir, "notify");
  const receiver = await notifyReceiver(socket);
  const child = spawnDaemon(files.configPath, files.secretsPath, socket);
  // The daemon's log lines (info) are read and dropped, as journald would take them.
  child.stderr?.resume();
  try {
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`daemon exited (${code})`))),
    );
    await Promise.race([receiver.wait(/STATUS=in service/, 30_000), exited]);
    const pid = child.pid;
    if (pid === undefined) throw new Error("daemon has no pid");
    const sample = (n: number) => ({
      vends: n,
      rssMb: round(rssMb(pid), 2),
      anonMb: round(rssAnonMb(pid), 2),
    });
    const series = [sample(0)];
    let denied = 0;
    const t0 = performance.now();
    for (let i = 1; i <= vends; i++) {
      const r = await Promise.race([instantVend(world, files.beaconId, 1 + (i % 9), 100 + (i % 50)), exited]);
      if (r === "stuck") throw new Error(`vend ${i} stuck`);
      if (r === "denied") denied++;
      if (i % every === 0) series.push(sample(i));
    }
    return { series, denied, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await stopChild(child);
    await receiver.close();
    files.remove();
    rmSync(dir, { recursive: true, force: true });
    await world.close();
  }
}

export async function benchMemory(vends = VENDS): Promise<BenchFigure[]> {
  const r = await memorySeries(vends);
  const at = (n: number) => r.series.find((s) => s.vends === n)?.rssMb ?? Number.NaN;
  const end = at(vends);
  const growth = end - at(vends / 2);
  return [
    {
      name: "memory.rssAtEnd",
      figure: end,
      unit: "MB",
      target: `<= ${END_TARGET_MB}`,
      pass: end <= END_TARGET_MB,
    },
    {
      name: "memory.growthSecondHalf",
      figure: round(growth, 2),
      unit: "MB",
      target: `<= ${GROWTH_TARGET_MB}`,
      pass: growth <= GROWTH_TARGET_MB,
    },
    ...r.series.map((s) => ({
      name: `memory.rss.vend${s.vends}`,
      figure: s.rssMb,
      unit: "MB",
      target: "-",
      pass: true,
    })),
    ...r.series
      .filter((s) => s.vends === 0 || s.vends === vends / 2 || s.vends === vends)
      .map((s) => ({
        name: `memory.rssAnon.vend${s.vends}`,
        figure: s.anonMb,
        unit: "MB",
        target: "-",
        pass: true,
      })),
    { name: "memory.vends", figure: vends, unit: "vends", target: `${VENDS}`, pass: vends >= VENDS },
    { name: "memory.denied", figure: r.denied, unit: "vends", target: "0", pass: r.denied === 0 },
    { name: "memory.runSeconds", figure: round(r.seconds, 1), unit: "s", target: "-", pass: true },
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchMemory(Number(process.argv[2] ?? VENDS)).then(
    (fs) => {
      for (const f of fs) process.stdout.write(`${JSON.stringify(f)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(
        `bench-memory: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
