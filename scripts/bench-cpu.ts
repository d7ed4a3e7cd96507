/**
 * Engine CPU per vend (issue 12): the engine and a real file journal (tmpfs, so fsync costs nothing and the
 * figure is CPU), with an instant in-process payment service (the sim driver, customer accepts at once) and
 * VMC (the sim VMC, dispenses at once), on the system clock. `process.cpuUsage()` over N vends (after a
 * warm-up), divided by N. The fakes' own cost is measured and subtracted: every call into the payment
 * driver and the VMC is timed (`performance.now()` around the call, up to the promise it returns: the
 * synchronous part, which is where a fake's CPU goes; its timers are the clock's, counted with the
 * engine). Logging is silent (the daemon's info lines per vend are the logger's cost, not the engine's).
 * Target: < 0.5 ms per vend.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { createSimDisplay } from "../drivers/display/sim.js";
import { SimVmc } from "../drivers/vmc/sim.js";
import { systemClock } from "../src/core/clock.js";
import { createEngine } from "../src/engine/factory.js";
import type { EngineOptions } from "../src/engine/options.js";
import { openSqliteJournal } from "../src/journal/sqlite.js";
import { SimPaymentDriver } from "../src/payment/sim.js";
import type { BenchFigure } from "./benchFigure.js";
import { journalBase, round } from "./benchRig.js";

const VENDS = 2000;
const WARMUP = 200;
const TARGET_MS = 0.5;

const ENGINE: EngineOptions = {
  currency: "DKK",
  scheme: "servicepos",
  paymentTimeoutMs: 60_000,
  vendTimeoutMs: 30_000,
  unknownOutcome: "capture",
  paymentMode: "reservation",
  captureType: "full",
};

/** Wraps every method of `target` so that the time spent inside it (synchronous part) adds to `meter.ms`. */
function metered<T extends object>(target: T, meter: { ms: number }): T {
  return new Proxy(target, {
    get(obj, key, receiver) {
      const v: unknown = Reflect.get(obj, key, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const t = performance.now();
        try {
          return Reflect.apply(v, obj, args);
        } finally {
          meter.ms += performance.now() - t;
        }
      };
    },
  });
}

/**
 * Engine CPU over `vends` vends. `memoryJournal`: the journal in memory (`:memory:`, no WAL, no fsync), to
 * show how much of the figure is the file journal's commits.
 */
export async function engineCpu(
  vends = VENDS,
  memoryJournal = false,
): Promise<{ cpuMsPerVend: number; fakesMsPerVend: number; wallMsPerVend: number }> {
  const dir = mkdtempSync(join(journalBase("tmpfs"), "vendd-bench-cpu-"));
  const path = memoryJournal ? ":memory:" : join(dir, "journal.db");
  const journal = openSqliteJournal({ path, unitId: "cpu", clock: systemClock });
  const meter = { ms: 0 };
  const sim = new SimPaymentDriver({
    clock: systemClock,
    pollDelayMs: 0,
    customer: () => ({ action: "accept", afterMs: 0 }),
  });
  const simVmc = new SimVmc({ clock: systemClock, dispenseMs: 0 });
  const engine = createEngine(ENGINE, {
    payment: metered(sim, meter),
    vmc: metered(simVmc, meter),
    display: createSimDisplay(),
    journal,
    clock: systemClock,
    logger: pino({ level: "silent" }),
  });
  const vend = async (i: number) => {
    const done = new Promise<void>((r) => {
      const off = engine.onSessionFinished(() => {
        off();
        r();
      });
    });
    if (!simVmc.requestVend(1 + (i % 9), 100 + (i % 50))) throw new Error(`vend ${i} refused by the sim VMC`);
    await done;
    await engine.whenIdle();
  };
  try {
    await engine.start();
    for (let i = 0; i < WARMUP; i++) await vend(i);
    meter.ms = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < vends; i++) await vend(i);
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    return {
      cpuMsPerVend: (cpu.user + cpu.system) / 1000 / vends,
      fakesMsPerVend: meter.ms / vends,
      wallMsPerVend: wall / vends,
    };
  } finally {
    await engine.stop();
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchCpu(): Promise<BenchFigure[]> {
  const r = await engineCpu();
  const net = r.cpuMsPerVend - r.fakesMsPerVend;
  const mem = await engineCpu(VENDS, true);
  return [
    {
      name: "cpu.enginePerVend",
      figure: round(net),
      unit: "ms",
      target: `< ${TARGET_MS}`,
      pass: net < TARGET_MS,
    },
    {
      name: "cpu.enginePerVendJournalInMemory",
      figure: round(mem.cpuMsPerVend - mem.fakesMsPerVend),
      unit: "ms",
      target: "-",
      pass: true,
    },
    { name: "cpu.processPerVend", figure: round(r.cpuMsPerVend), unit: "ms", target: "-", pass: true },
    { name: "cpu.fakesPerVend", figure: round(r.fakesMsPerVend), unit: "ms", target: "-", pass: true },
    { name: "cpu.wallPerVend", figure: round(r.wallMsPerVend), unit: "ms", target: "-", pass: true },
    { name: "cpu.vends", figure: VENDS, unit: "vends", target: ">= 2000", pass: VENDS >= 2000 },
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchCpu().then(
    (fs) => {
      for (const f of fs) process.stdout.write(`${JSON.stringify(f)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`bench-cpu: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
