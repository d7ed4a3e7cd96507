/**
 * The board table (docs/board.md, "x86 and emulated arm64"): the same `vendd run` measured from outside the
 * process, so that any build can be measured: this checkout's dist/, a release's bundle, or an arm64
 * release run by the arm64 Node under qemu-aarch64. The unit is the chaos rig's (V10 against the emulator
 * in this process, the MDB adapter on the simulator's PTY, an instant customer).
 *
 *   node dist/scripts/bench-board.js [--node PROGRAM] [--cli MAIN.JS] [--vends N] [--starts N]
 *
 * Figures: spawn → "unit in service" (median of --starts, the journal already holding the vends of the
 * previous runs); a vend's wall time from the VMC's request to the end of its session (the customer pays
 * at once; includes the emulator's 50 ms status polls, the same for every build, so differences are the
 * unit's); the daemon's RSS (VmRSS, for qemu the emulator's process with its translated code) after N vends;
 * a vend's two edges, from timestamps taken in this process (which hosts both ends), so that they need
 * nothing inside the daemon and work under qemu:
 * - approval: the emulator's answer to a status GET saying `Reserved` handed to the socket → the approval
 *   line `C,VEND,<amount>` read by the simulator from the PTY (the last `Reserved` answer before it);
 * - capture: the simulator's `c,VEND,SUCCESS` written to the PTY → the capture request (`POST
 *   /v10/payments/{id}/capture`) arriving at the emulator.
 * Both include this process's event-loop latency and the PTY's and loopback's, the same for every build.
 * Environment for the program: QEMU_LD_PREFIX when --node is an arm64 binary.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { pause, selectionVend, waitUntil } from "../src/chaos/actors.js";
import type { World } from "../src/chaos/rig.js";
import { startWorld, Unit } from "../src/chaos/rig.js";
import { priceOf } from "../src/chaos/scenario.js";

function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m?.[1] === undefined ? Number.NaN : Math.round(Number(m[1]) / 102.4) / 10;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

const STATUS_PATH = /^\/v10\/payments\/[^/]+$/;
const CAPTURE_PATH = /^\/v10\/payments\/[^/]+\/capture$/;

function isReserved(body: unknown): boolean {
  return typeof body === "object" && body !== null && "status" in body && body.status === "Reserved";
}

/** Pairs the edge timestamps of each vend (ms). */
class EdgeProbe {
  readonly approval: number[] = [];
  readonly capture: number[] = [];
  private reservedAt: number | null = null;
  private successAt: number | null = null;
  private readonly offs: Array<() => void>;

  constructor(world: World) {
    this.offs = [
      world.emu.onHttp((e) => {
        if (e.answer === undefined) {
          if (e.method === "POST" && CAPTURE_PATH.test(e.path) && this.successAt !== null) {
            this.capture.push(e.at - this.successAt);
            this.successAt = null;
          }
        } else if (e.method === "GET" && STATUS_PATH.test(e.path) && isReserved(e.answer.body)) {
          this.reservedAt = e.at;
        }
      }),
      world.sim.onCommand((line) => {
        if (!line.startsWith("C,VEND,") || line === "C,VEND,-1" || this.reservedAt === null) return;
        this.approval.push(performance.now() - this.reservedAt);
        this.reservedAt = null;
      }),
      world.sim.onSent((data) => {
        if (data.startsWith("c,VEND,SUCCESS")) this.successAt = performance.now();
      }),
    ];
  }

  close(): void {
    for (const off of this.offs) off();
  }
}

function summary(xs: number[]): { p50: number; p99: number; n: number } {
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50: r(pct(xs, 50)), p99: r(pct(xs, 99)), n: xs.length };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      node: { type: "string", default: process.execPath },
      cli: { type: "string", default: resolve("dist/src/cli/main.js") },
      vends: { type: "string", default: "200" },
      starts: { type: "string", default: "3" },
    },
  });
  const vends = Number(values.vends);
  const starts = Number(values.starts);
  const world = await startWorld(50);
  const unit = Unit.create(world, { driver: "v10", flow: "selection" });
  unit.launchDefaults = {
    command: [values.node, values.cli],
    readyTimeoutMs: 120_000,
    env: { QEMU_LD_PREFIX: process.env.QEMU_LD_PREFIX ?? "/usr/aarch64-linux-gnu" },
  };
  const ctx = {
    emu: world.emu,
    sim: world.sim,
    beaconId: unit.files.beaconId,
    phone: "+4520031801",
    payWithinMs: 20_000,
    decideWithinMs: 20_000,
    random: () => 0.5,
  };
  const probe = new EdgeProbe(world);
  try {
    const ready: number[] = [];
    const walls: number[] = [];
    // Vends the unit did not sell (denied: its payment timeout passed first, as under a loaded qemu).
    let notSold = 0;
    const rss: Array<[number, number]> = [];
    for (let s = 0; s < starts; s++) {
      const d = await unit.start();
      ready.push(Date.now() - d.spawnedAt);
      rss.push([0, rssMiB(d.pid)]);
      const per = Math.floor(vends / starts);
      for (let i = 0; i < per; i++) {
        const index = s * per + i;
        // The VMC back to idle and the unit settled, as between two customers.
        await pause(150);
        await waitUntil(() => world.sim.reader === "enabled", 20_000);
        const t = performance.now();
        const r = await selectionVend(ctx, 1 + (index % 9), priceOf(index), 1);
        if (r.outcome === "success") walls.push(performance.now() - t);
        else notSold++;
        if ((index + 1) % 50 === 0) rss.push([index + 1, rssMiB(d.pid)]);
      }
      await unit.daemon?.stop();
    }
    const out = {
      program: values.node,
      cli: values.cli,
      startToReadyMs: { median: median(ready), all: ready },
      vendWallMs: {
        p50: Math.round(pct(walls, 50)),
        p99: Math.round(pct(walls, 99)),
        n: walls.length,
        notSold,
      },
      reservedToApprovalMs: summary(probe.approval),
      vendSuccessToCaptureMs: summary(probe.capture),
      rssMiB: rss,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    probe.close();
    await world.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-board: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
