/**
 * Engine benchmark (issue 5; after `npm run build`: `node dist/scripts/bench-engine.js`). Figures, not
 * timed tests:
 * 1. vends per second with an instant customer: the in-process engine, a real file journal, the V10 driver
 *    against the emulator (pollDelayMs 10, acceptToReservedMs 0), the sim VMC with dispenseMs 0;
 * 2. journal commits per vend, and of those the durable ones (synchronous=FULL: one WAL fsync each; the
 *    strace count of real fsyncs and the journal's size per vend are scripts/bench-fsync.ts);
 * 3. the engine's added latency per vend: wall time per vend minus the poll waits the service imposed
 *    (time spent in the engine's clock sleeps); target < 5 ms. Measured with the journal in the temporary
 *    directory (real fsyncs) and on /dev/shm (fsync nearly free), to separate the disk from the engine;
 */

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { createSimDisplay } from "../drivers/display/sim.js";
import { SimVmc } from "../drivers/vmc/sim.js";
import { buildConfig } from "../src/config/load.js";
import { paymentOptions } from "../src/config/seams.js";
import { type Clock, systemClock } from "../src/core/clock.js";
import { emulatorSecrets, emulatorV10Settings } from "../src/demo/emulatorSettings.js";
import { startEmulator } from "../src/emulator/index.js";
import { createEngine } from "../src/engine/factory.js";
import type { EngineOptions } from "../src/engine/options.js";
import { openSqliteJournal } from "../src/journal/sqlite.js";
import type { PaymentDriver } from "../src/payment/driver.js";
import { createPaymentDriver } from "../src/payment/factory.js";

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
): Promise<{ wallMs: number; sleptMs: number; commits: number; durableCommits: number }> {
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
    const durable0 = journal.durableCommits;
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
      durableCommits: journal.durableCommits - durable0,
    };
  } finally {
    await engine.stop();
    await payment.close();
    journal.close();
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs every part and returns the figures (ms, bytes, counts). */
export async function benchEngine(): Promise<Record<string, number | string>> {
  const vends = 300;
  const run = await emulatorVends(vends);
  const shm = existsSync("/dev/shm") ? await emulatorVends(vends, "/dev/shm") : null;
  return {
    vends,
    vendsPerSecond: round((vends * 1000) / run.wallMs, 1),
    wallMsPerVend: round(run.wallMs / vends),
    pollWaitMsPerVend: round(run.sleptMs / vends),
    engineAddedMsPerVend: round((run.wallMs - run.sleptMs) / vends),
    engineAddedMsPerVendJournalOnTmpfs:
      shm === null ? "no /dev/shm" : round((shm.wallMs - shm.sleptMs) / vends),
    commitsPerVend: round(run.commits / vends, 2),
    durableCommitsPerVend: round(run.durableCommits / vends, 2),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.stdout.write(`${JSON.stringify(await benchEngine(), null, 2)}\n`);
}
