/**
 * Engine benchmark (issue 5; after `npm run build`: `node dist/scripts/bench-engine.js`). Figures, not
 * timed tests:
 * 1. vends per second with an instant customer: the in-process engine, a real file journal, the V10 driver
 *    against the emulator (pollDelayMs 10, acceptToReservedMs 0), the sim VMC with dispenseMs 0;
 * 2. journal commits per vend (each one WAL fsync with synchronous=FULL), and when strace is installed the
 *    real fsync+fdatasync count per vend of a child run (`strace -c -f`), as the difference of two runs;
 * 3. the engine's added latency per vend: wall time per vend minus the poll waits the service imposed
 *    (time spent in the engine's clock sleeps); target < 5 ms. Measured with the journal in the temporary
 *    directory (real fsyncs) and on /dev/shm (fsync nearly free), to separate the disk from the engine;
 * 4. the journal's size (db + wal, bytes) after 100,000 vends with the sim payment driver and sim VMC on a
 *    ManualClock (real file journal, on /dev/shm when present: the size does not depend on the medium).
 *    Vends are spread at 1,000 a day of virtual time; afterwards the default 90-day retention runs and the
 *    sessions it removed and kept are reported (the file keeps its size: SQLite reuses freed pages, and
 *    the unit never VACUUMs an SD card).
 * `--child-vends N` runs only part 1 with N vends and prints `{"commits":…}` (the strace child).
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pino from "pino";
import { createSimDisplay } from "../drivers/display/sim.js";
import { SimVmc } from "../drivers/vmc/sim.js";
import { buildConfig } from "../src/config/load.js";
import { paymentOptions } from "../src/config/seams.js";
import { type Clock, ManualClock, systemClock } from "../src/core/clock.js";
import { emulatorSecrets, emulatorV10Settings } from "../src/demo/emulatorSettings.js";
import { startEmulator } from "../src/emulator/index.js";
import { createEngine } from "../src/engine/factory.js";
import type { EngineOptions } from "../src/engine/options.js";
import { openSqliteJournal } from "../src/journal/sqlite.js";
import type { PaymentDriver } from "../src/payment/driver.js";
import { createPaymentDriver } from "../src/payment/factory.js";
import { SimPaymentDriver } from "../src/payment/sim.js";

const ENGINE: EngineOptions = {
  currency: "DKK",
  scheme: "servicepos",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
  paymentMode: "reservation",
  captureType: "full",
};

const silent = pino({ level: "silent" });
const round = (n: number, places = 3): number => Math.round(n * 10 ** places) / 10 ** places;

/** A clock that adds up the time the engine spends sleeping (the service's poll delays), ms. */
function sleepMeter(inner: Clock): { clock: Clock; slept: () => number } {
  let slept = 0;
  return {
    slept: () => slept,
    clock: {
      now: () => inner.now(),
      setTimer: (ms, fn) => inner.setTimer(ms, fn),
      async sleep(ms, signal) {
        const t = performance.now();
        try {
          await inner.sleep(ms, signal);
        } finally {
          slept += performance.now() - t;
        }
      },
    },
  };
}

/** Part 1: `vends` vends through the real V10 driver and emulator, one after the other. */
export async function emulatorVends(
  vends: number,
  base = tmpdir(),
): Promise<{ wallMs: number; sleptMs: number; commits: number }> {
  const emu = await startEmulator({ pollDelayMs: 10, acceptToReservedMs: 0 });
  const dir = mkdtempSync(join(base, "vendd-bench-"));
  const meter = sleepMeter(systemClock);
  const journal = openSqliteJournal({ path: join(dir, "journal.db"), unitId: "bench", clock: systemClock });
  const config = buildConfig({
    unit: { id: "bench", name: "Bench" },
    payment: { driver: "v10", v10: emulatorV10Settings(emu.info) },
  });
  const inner = await createPaymentDriver(paymentOptions(config, emulatorSecrets(emu.info, "v10")), {
    clock: meter.clock,
    logger: silent,
    ownsOrder: (o) => journal.ownsLiveOrder(o),
  });
  let beacon = "";
  // The instant customer: checks in and accepts as soon as the payment exists.
  const payment: PaymentDriver = {
    ...inner,
    kind: inner.kind,
    open: async (s) => {
      const id = await inner.open(s);
      beacon = id.beaconId;
      return id;
    },
    start: async (req, s) => {
      const ref = await inner.start(req, s);
      emu.userSimulation.checkin(beacon, "+4520031801");
      emu.userSimulation.accept(beacon, "+4520031801");
      return ref;
    },
  };
  const vmc = new SimVmc({ clock: systemClock, dispenseMs: 0 });
  const engine = createEngine(ENGINE, {
    payment,
    vmc,
    display: createSimDisplay(),
    journal,
    clock: meter.clock,
    logger: silent,
  });
  try {
    await engine.start();
    const commits0 = journal.commits;
    const slept0 = meter.slept();
    const t0 = performance.now();
    for (let i = 0; i < vends; i++) {
      const done = new Promise<void>((r) => {
        const off = engine.onSessionFinished(() => {
          off();
          r();
        });
      });
      if (!vmc.requestVend(1 + (i % 9), 100 + (i % 50))) throw new Error(`vend ${i} refused by the sim VMC`);
      await done;
      await engine.whenIdle();
    }
    return {
      wallMs: performance.now() - t0,
      sleptMs: meter.slept() - slept0,
      commits: journal.commits - commits0,
    };
  } finally {
    await engine.stop();
    await payment.close();
    journal.close();
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 1,000 vends a day of virtual time. */
const VEND_SPACING_MS = 86_400;
/** The default `journal.retentionDays`. */
const RETENTION_DAYS = 90;

/** Part 4: `vends` vends on a ManualClock with the sim payment driver and sim VMC; journal bytes after. */
export async function journalSize(
  vends: number,
): Promise<{ dbBytes: number; walBytes: number; ms: number; retained: number; removed: number }> {
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dir = mkdtempSync(join(base, "vendd-size-"));
  const path = join(dir, "journal.db");
  const clock = new ManualClock();
  const journal = openSqliteJournal({ path, unitId: "size", clock });
  const payment = new SimPaymentDriver({
    clock,
    pollDelayMs: 200,
    customer: () => ({ action: "accept", afterMs: 0 }),
  });
  const vmc = new SimVmc({
    clock,
    dispenseMs: 0,
    outcome: (v) => (v.price % 10 === 0 ? "failure" : "success"),
  });
  const engine = createEngine(ENGINE, {
    payment,
    vmc,
    display: createSimDisplay(),
    journal,
    clock,
    logger: silent,
  });
  const t0 = performance.now();
  try {
    await engine.start();
    for (let i = 0; i < vends; i++) {
      let finished = false;
      const off = engine.onSessionFinished(() => {
        finished = true;
      });
      if (!vmc.requestVend(1 + (i % 9), 100 + (i % 50))) throw new Error(`vend ${i} refused by the sim VMC`);
      for (let step = 0; !finished && step < 100; step++) await clock.advanceAsync(200, 200);
      off();
      if (!finished) throw new Error(`vend ${i} did not finish in 20 s of virtual time`);
      clock.advance(VEND_SPACING_MS);
    }
    await engine.stop();
    const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
    const sizes = { dbBytes: size(path), walBytes: size(`${path}-wal`) };
    const removed = journal.retain(clock.now() - RETENTION_DAYS * 86_400_000);
    const retained = journal.sessions().length;
    const result = { ...sizes, ms: performance.now() - t0, retained, removed };
    journal.close();
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Part 2: real fsync+fdatasync calls of a child run of `vends` vends, from `strace -c -f`; null without strace. */
function stracedSyncs(vends: number): number | null {
  if (spawnSync("strace", ["-V"], { stdio: "ignore" }).status !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), "vendd-strace-"));
  const out = join(dir, "summary.txt");
  try {
    const self = fileURLToPath(import.meta.url);
    const args = [
      "-c",
      "-f",
      "-e",
      "trace=fsync,fdatasync",
      "-o",
      out,
      process.execPath,
      self,
      "--child-vends",
    ];
    const r = spawnSync("strace", [...args, String(vends)], { encoding: "utf8", timeout: 300_000 });
    if (r.status !== 0) throw new Error(`strace child failed: ${r.stderr.slice(-500)}`);
    let calls = 0;
    for (const line of readFileSync(out, "utf8").split("\n")) {
      const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$/.exec(line);
      if (m) calls += Number(m[1]);
    }
    return calls;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs every part and returns the figures (ms, bytes, counts). */
export async function benchEngine(): Promise<Record<string, number | string>> {
  const vends = 300;
  const run = await emulatorVends(vends);
  const shm = existsSync("/dev/shm") ? await emulatorVends(vends, "/dev/shm") : null;
  const few = stracedSyncs(50);
  const many = stracedSyncs(150);
  const sizeVends = 100_000;
  const size = await journalSize(sizeVends);
  return {
    vends,
    vendsPerSecond: round((vends * 1000) / run.wallMs, 1),
    wallMsPerVend: round(run.wallMs / vends),
    pollWaitMsPerVend: round(run.sleptMs / vends),
    engineAddedMsPerVend: round((run.wallMs - run.sleptMs) / vends),
    engineAddedMsPerVendJournalOnTmpfs:
      shm === null ? "no /dev/shm" : round((shm.wallMs - shm.sleptMs) / vends),
    commitsPerVend: round(run.commits / vends, 2),
    fsyncsPerVend: few === null || many === null ? "strace not installed" : round((many - few) / 100, 2),
    journalVends: sizeVends,
    journalDbBytes: size.dbBytes,
    journalWalBytes: size.walBytes,
    journalBytesPerVend: round((size.dbBytes + size.walBytes) / sizeVends, 1),
    journalRunSeconds: round(size.ms / 1000, 1),
    journalSessionsRemovedByRetention: size.removed,
    journalSessionsKeptByRetention: size.retained,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--child-vends");
  if (at >= 0) {
    const r = await emulatorVends(Number(process.argv[at + 1] ?? "50"));
    process.stdout.write(`${JSON.stringify({ commits: r.commits })}\n`);
  } else {
    process.stdout.write(`${JSON.stringify(await benchEngine(), null, 2)}\n`);
  }
}
