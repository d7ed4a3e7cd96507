/**
 * The bench's view of the machine it runs on (scripts/bench-fleet.ts): how fast the host is just now, how
 * much CPU it takes from this VM, and how busy the machine and each process were over a span, from /proc.
 * None of these changes a figure; each mode's summary line prints them as context for its latencies.
 */
import { createPublicKey, sign, verify as verifySignature } from "node:crypto";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { generateUnitKey } from "../src/core/fleetAuth.js";
import { median } from "./fleetBenchRig.js";

/**
 * The host's speed just now: CPU µs of one Ed25519 check (crypto.verify), the most of any single step of a
 * unit request, idle machine. On this shared 2-core VM it has read from about 120 to 235 µs within one hour,
 * and p99 moves with it, so each mode's summary line prints it beside the figures.
 */
export function hostCheckUs(): number {
  const key = generateUnitKey();
  const data = Buffer.alloc(300, 1);
  const signature = sign(null, data, key.privateKey);
  const publicKey = createPublicKey(key.privateKey);
  const n = 2000;
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) verifySignature(null, data, publicKey, signature);
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / n;
}

/**
 * The CPU the host takes from this VM just now: fixed chunks of work (about 0.2 ms each) timed by the wall
 * clock for `ms` on the idle machine, before the run. A chunk that takes over 3× the median lost the
 * difference to something outside this process; with nothing else running here, that is the host (this
 * VM's kernel does not report it as steal time). Measured on 2026-11-27/28: 2-8% of one core, in bursts
 * about every 2 s in which a 100-ms window loses 30-65 ms. During the mixed load each stall of the fleet
 * processes (both at once, with the database) came within 0.1 s after such a burst; the requests that
 * queue then make the tail of the latency figures. Each mode's summary line prints the share lost and the
 * worst 100-ms window beside them, as context for p99: 5 s before the run does not predict the run.
 */
export function hostStealCheck(ms = 5_000): { lostPct: number; worstWindowMs: number } {
  let x = 1;
  const chunk = (): void => {
    for (let i = 0; i < 20_000; i++) x = (x * 1_103_515_245 + 12_345) >>> 0;
  };
  for (let i = 0; i < 2_000; i++) chunk(); // optimised before it is timed
  const walls: [number, number][] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t0 = performance.now();
    chunk();
    walls.push([t0, performance.now() - t0]);
  }
  const typical = median(walls.map(([, wall]) => wall));
  let lost = 0;
  const windows = new Map<number, number>();
  for (const [at, wall] of walls)
    if (wall > 3 * typical) {
      lost += wall - typical;
      const w = Math.floor(at / 100);
      windows.set(w, (windows.get(w) ?? 0) + wall - typical);
    }
  return { lostPct: (100 * lost) / ms, worstWindowMs: Math.max(0, ...windows.values()) };
}

/**
 * Busy and total CPU ms of the whole machine since boot (all CPUs), to take the busy share of a span: from
 * /proc/stat's first line, where busy is everything but idle and iowait (os.cpus() leaves out iowait,
 * softirq and steal, so its busy share ran below the processes' own tick counts on SQLite's fsyncs).
 */
export function machineCpu(): { busy: number; total: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    // cpu user nice system idle iowait irq softirq steal (guest time is inside user), in 10-ms ticks
    const t = line.trim().split(/\s+/).slice(1, 9).map(Number);
    if (t.length === 8 && t.every(Number.isFinite)) {
      const total = t.reduce((sum, x) => sum + x, 0);
      return { busy: (total - (t[3] ?? 0) - (t[4] ?? 0)) * 10, total: total * 10 };
    }
  } catch {
    // No /proc: os.cpus() below.
  }
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    const all = times.user + times.nice + times.sys + times.idle + times.irq;
    busy += all - times.idle;
    total += all;
  }
  return { busy, total };
}

/** CPU ms a process has used (user + system), from /proc (clock ticks of 10 ms); 0 where /proc is absent. */
export function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
