/**
 * Journal cost of a vend (issue 12; after `npm run build`: `node dist/scripts/bench-fsync.js`):
 * 1. `benchFsyncs`: 200 selection vends through the real daemon (`vendd run`, the built CLI) against the
 *    emulator and the VMC simulator on a PTY, under `strace -f`; every completed fsync/fdatasync is counted
 *    by file (the journal's WAL, the database file, anything else such as the owner sidecar). Per vend in the
 *    steady window, from the first payment request to the last one (start-up, recovery and shutdown
 *    outside it), and over the whole run. Checkpoints are included: an automatic or idle (housekeeping)
 *    checkpoint syncs the WAL and the database file; their syncs are counted, not hidden.
 * 2. `benchJournalSize`: the journal's bytes per vend with retention, on a ManualClock with the sim payment
 *    driver and sim VMC: 120 days at 100 vends a day, the default 90-day retention and the TRUNCATE
 *    checkpoint run once a day (the daemon runs them at idle, src/daemon/housekeeping.ts), then the journal's
 *    files (db + WAL) divided by the sessions it keeps.
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { createSimDisplay } from "../drivers/display/sim.js";
import { SimVmc } from "../drivers/vmc/sim.js";
import { runScenario, startWorld, Unit } from "../src/chaos/index.js";
import { countSyncs, type SyncCounts } from "../src/chaos/straceOrder.js";
import { ManualClock } from "../src/core/clock.js";
import { DAY_MS } from "../src/core/days.js";
import { seededRandom } from "../src/core/random.js";
import { createEngine } from "../src/engine/factory.js";
import type { EngineOptions } from "../src/engine/options.js";
import { openSqliteJournal } from "../src/journal/sqlite.js";
import { SimPaymentDriver } from "../src/payment/sim.js";
import type { BenchFigure } from "./benchFigure.js";

const round = (n: number, places = 2): number => Math.round(n * 10 ** places) / 10 ** places;

/** The start request of a selection vend (V10), as the daemon writes it to its socket. */
const START_REQUEST = /writev\(\d+<TCP:\[[^\]]*\]>, \[\{iov_base="POST \/v10\/payments HTTP\/1\.1/;

/** Fsyncs per selection vend of the daemon under strace (see the file comment). */
export async function benchFsyncs(vends = 200): Promise<BenchFigure[]> {
  const target = "<= 3";
  if (spawnSync("strace", ["-V"], { stdio: "ignore" }).status !== 0) {
    return [
      {
        name: "fsyncs per selection vend (strace not installed)",
        figure: -1,
        unit: "fsyncs/vend",
        target,
        pass: false,
      },
    ];
  }
  const dir = mkdtempSync(join(tmpdir(), "vendd-bench-fsync-"));
  const out = join(dir, "daemon.trace");
  const world = await startWorld(50);
  try {
    const unit = Unit.create(world, { driver: "v10", flow: "selection" });
    const prefix = [
      "strace",
      "-f",
      "-qq",
      "-yy",
      "-s",
      "48",
      "-e",
      "trace=fsync,fdatasync,writev,pwrite64",
      "-o",
      out,
    ];
    await unit.start({ prefix, readyTimeoutMs: 60_000 });
    const { records } = await runScenario(unit, { vends, random: seededRandom(12), successRate: 0.9 });
    const exit = await unit.daemon?.stop();
    if (exit?.code !== 0) throw new Error(`the daemon did not stop cleanly: ${JSON.stringify(exit)}`);
    const journalPath = unit.files.journalPath;
    const lines = readFileSync(out, "utf8").split("\n");
    const starts = [...lines.entries()].filter(([, l]) => START_REQUEST.test(l)).map(([at]) => at);
    const first = starts[0];
    const last = starts.at(-1);
    if (first === undefined || last === undefined || starts.length < 2)
      throw new Error(`only ${starts.length} payment requests in the trace`);
    // From the first start request to the last: starts - 1 whole vends (each vend's three durable commits,
    // its two that do not wait, vend requests refused while busy, and whatever checkpoints fell in between).
    const steady = starts.length - 1;
    const window = countSyncs(lines.slice(first, last).join("\n"), journalPath);
    const whole = countSyncs(lines.join("\n"), journalPath);
    const delivered = records.filter((r) => r.outcome === "success" || r.outcome === "failure").length;
    const per = (n: number, of = steady) => round(n / of);
    const checkpoints = window.checkpointWal + window.db;
    const all = (c: SyncCounts) => c.commit + c.checkpointWal + c.db + c.other;
    return [
      {
        name: `WAL fsyncs of commits per selection vend (daemon under strace, ${steady} vends in the window, ${delivered} of ${records.length} vended)`,
        figure: per(window.commit),
        unit: "fsyncs/vend",
        target,
        pass: per(window.commit) <= 3,
      },
      {
        name: "checkpoint fsyncs per selection vend (WAL + database file; automatic and idle checkpoints)",
        figure: per(checkpoints, steady),
        unit: "fsyncs/vend",
        target: "reported",
        pass: true,
      },
      {
        name: "all fsyncs per selection vend in the window (commits, checkpoints, owner sidecar)",
        figure: per(all(window)),
        unit: "fsyncs/vend",
        target: "reported",
        pass: true,
      },
      {
        name: `all fsyncs per vend over the whole run (start-up, recovery and shutdown included, ${records.length} vends)`,
        figure: per(all(whole), records.length),
        unit: "fsyncs/vend",
        target: "reported",
        pass: true,
      },
    ];
  } finally {
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const ENGINE: EngineOptions = {
  currency: "DKK",
  scheme: "servicepos",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
  paymentMode: "reservation",
  captureType: "full",
};

/** The default `journal.retentionDays`. */
const RETENTION_DAYS = 90;

/** Bytes of the journal per vend it keeps, with retention (see the file comment). */
export async function benchJournalSize(days = 120, perDay = 100): Promise<BenchFigure[]> {
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dir = mkdtempSync(join(base, "vendd-size-"));
  const path = join(dir, "journal.db");
  const clock = new ManualClock();
  const journal = openSqliteJournal({ path, unitId: "vm-000000001", clock });
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
    logger: pino({ level: "silent" }),
  });
  try {
    await engine.start();
    let i = 0;
    for (let day = 0; day < days; day++) {
      const dayStart = clock.now();
      for (let n = 0; n < perDay; n++, i++) {
        let finished = false;
        const off = engine.onSessionFinished(() => {
          finished = true;
        });
        if (!vmc.requestVend(1 + (i % 9), 100 + (i % 50)))
          throw new Error(`vend ${i} refused by the sim VMC`);
        for (let step = 0; !finished && step < 100; step++) await clock.advanceAsync(200, 200);
        off();
        if (!finished) throw new Error(`vend ${i} did not finish in 20 s of virtual time`);
      }
      clock.advance(Math.max(0, DAY_MS - (clock.now() - dayStart)));
      // Housekeeping at idle: retention, then the TRUNCATE checkpoint.
      journal.retain(clock.now() - RETENTION_DAYS * DAY_MS);
      journal.checkpoint();
    }
    await engine.stop();
    const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
    const db = size(path);
    const wal = size(`${path}-wal`);
    const kept = journal.sessions().length;
    const perVend = round((db + wal) / kept, 0);
    return [
      {
        name: `journal bytes per vend kept (${i} vends over ${days} days, ${RETENTION_DAYS}-day retention keeps ${kept}; db ${db} B, WAL ${wal} B)`,
        figure: perVend,
        unit: "bytes/vend",
        target: "<= 1024",
        pass: perVend <= 1024,
      },
    ];
  } finally {
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const only = process.argv[2];
  const figures = [
    ...(only === undefined || only === "fsync" ? await benchFsyncs() : []),
    ...(only === undefined || only === "size" ? await benchJournalSize() : []),
  ];
  for (const f of figures) process.stdout.write(`${JSON.stringify(f)}\n`);
}
