/**
 * `npm run bench`: runs every benchmark and prints its figures with the target each is judged against.
 * Benchmarks are not tests: they print numbers for a person (and CI logs) to read. `npm run bench -- NAME`
 * runs one group (see GROUPS); `--json` prints one `BenchFigure` JSON object per line instead of the
 * human table, for scripts.
 */
import { pathToFileURL } from "node:url";
import { benchCpu } from "./bench-cpu.js";
import { benchDisplay } from "./bench-display.js";
import { benchDrivers } from "./bench-drivers.js";
import { benchEmulator } from "./bench-emulator.js";
import { benchEngine } from "./bench-engine.js";
import { benchFleet } from "./bench-fleet.js";
import { benchFsyncs, benchJournalSize } from "./bench-fsync.js";
import { benchLatency } from "./bench-latency.js";
import { benchMemory } from "./bench-memory.js";
import { benchReconcile } from "./bench-reconcile.js";
import { benchRecovery } from "./bench-recovery.js";
import { benchReporting } from "./bench-reporting.js";
import { benchStartup } from "./bench-startup.js";
import { benchVmc } from "./bench-vmc.js";
import type { BenchFigure } from "./benchFigure.js";

type Table = Record<string, number | string>;

/** What a group's run gives: figures judged against targets, plus detail rows for the human table. */
export interface GroupResult {
  figures: BenchFigure[];
  detail: Table;
}

export interface BenchGroup {
  name: string;
  what: string;
  run: () => Promise<GroupResult>;
}

/** How one numeric figure of an older table-shaped bench is judged (keys not listed are detail only). */
interface TableTarget {
  key: string;
  unit: string;
  target: string;
  pass: (v: number) => boolean;
}

/** Wraps a bench that returns a flat table: the listed keys become figures named `<group>.<key>`. */
function fromTable(
  name: string,
  run: () => Promise<Table>,
  targets: TableTarget[],
): () => Promise<GroupResult> {
  return async () => {
    const detail = await run();
    const figures: BenchFigure[] = [];
    for (const t of targets) {
      const v = detail[t.key];
      if (typeof v !== "number") continue;
      figures.push({ name: `${name}.${t.key}`, figure: v, unit: t.unit, target: t.target, pass: t.pass(v) });
    }
    return { figures, detail };
  };
}

/** Wraps a bench that returns figures only. */
function fromFigures(run: () => Promise<BenchFigure[]>): () => Promise<GroupResult> {
  return async () => ({ figures: await run(), detail: {} });
}

/**
 * Every benchmark group, in run order. A function returning `BenchFigure[]` joins as one more entry with
 * `run: fromFigures(fn)` (the journal's fsync count and size benches are added this way).
 */
export const GROUPS: BenchGroup[] = [
  {
    name: "emulator",
    what: "payment-service emulator on loopback",
    run: fromTable("emulator", benchEmulator, [
      { key: "openLoopP99Ms", unit: "ms", target: "< 5", pass: (v) => v < 5 },
      { key: "closedLoopPollsPerS", unit: "polls/s", target: ">= 7000", pass: (v) => v >= 7000 },
    ]),
  },
  {
    name: "drivers",
    what: "payment drivers, client CPU per call",
    run: fromTable("drivers", benchDrivers, [
      { key: "v10CpuPerStartMs", unit: "ms", target: "< 1", pass: (v) => v < 1 },
      { key: "v10CpuPerCaptureMs", unit: "ms", target: "< 1", pass: (v) => v < 1 },
      { key: "legacyCpuPerStartMs", unit: "ms", target: "< 1", pass: (v) => v < 1 },
      { key: "legacyCpuPerCaptureMs", unit: "ms", target: "< 1", pass: (v) => v < 1 },
    ]),
  },
  {
    name: "vmc",
    what: "MDB adapter driver under the r,ACK flood",
    run: fromTable("vmc", benchVmc, [
      { key: "cpuPercentOfOneCore", unit: "%", target: "< 2", pass: (v) => v < 2 },
    ]),
  },
  {
    name: "engine",
    what: "vend engine and journal",
    run: fromTable("engine", benchEngine, [
      { key: "engineAddedMsPerVend", unit: "ms", target: "< 5", pass: (v) => v < 5 },
    ]),
  },
  {
    name: "latency",
    what: "edge latencies: reserved answer → approval on the serial line; c,VEND,SUCCESS → capture request",
    run: fromFigures(benchLatency),
  },
  {
    name: "cpu",
    what: "engine CPU per vend, instant in-process service and VMC",
    run: fromFigures(benchCpu),
  },
  {
    name: "startup",
    what: "process start to READY=1, sim board, 100,000-session journal",
    run: fromFigures(benchStartup),
  },
  {
    name: "memory",
    what: "daemon RSS over 10,000 vends against the emulator",
    run: fromFigures(benchMemory),
  },
  {
    name: "recovery",
    what: "1,000 unresolved sessions settled at start-up",
    run: fromFigures(benchRecovery),
  },
  {
    name: "display",
    what: "drawing one screen on a 240x240 16-bit framebuffer, against a durable commit on the same disk",
    run: fromFigures(() => benchDisplay()),
  },
  {
    name: "fsync",
    what: "WAL fsyncs per selection vend through the daemon under strace (200 vends)",
    run: fromFigures(benchFsyncs),
  },
  {
    name: "size",
    what: "journal bytes per vend kept, with retention",
    run: fromFigures(benchJournalSize),
  },
  {
    name: "reporting",
    what: "emulator transaction reporting, one day of 100,000 lines in pages of 1000",
    run: fromFigures(benchReporting),
  },
  {
    name: "reconcile",
    what: "settlement reconciliation of 5,000 vends across 20 units against the emulator's report",
    run: fromFigures(benchReconcile),
  },
  {
    name: "fleet",
    what: "fleet server: 10,000 units' heartbeats and vend events, SQLite (1 process) and PostgreSQL (2)",
    run: fromFigures(benchFleet),
  },
];

function formatFigure(f: BenchFigure): string {
  return `${f.figure} ${f.unit}  (target ${f.target}: ${f.pass ? "pass" : "MISS"})`;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  const only = argv.filter((a) => a !== "--json")[0];
  const chosen = GROUPS.filter((g) => only === undefined || g.name === only);
  if (chosen.length === 0) {
    process.stderr.write(`unknown benchmark ${only}; valid: ${GROUPS.map((g) => g.name).join(", ")}\n`);
    return 2;
  }
  for (const g of chosen) {
    const started = Date.now();
    if (!json) process.stdout.write(`\n== ${g.name}: ${g.what}\n`);
    const { figures, detail } = await g.run();
    if (json) {
      for (const f of figures) process.stdout.write(`${JSON.stringify(f)}\n`);
      continue;
    }
    const rows: [string, string][] = [
      ...figures.map((f): [string, string] => [f.name, formatFigure(f)]),
      ...Object.entries(detail).map(([k, v]): [string, string] => [k, String(v)]),
    ];
    const width = Math.max(0, ...rows.map(([k]) => k.length));
    for (const [k, v] of rows) process.stdout.write(`   ${k.padEnd(width)}  ${v}\n`);
    process.stdout.write(`   (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
