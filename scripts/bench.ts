/**
 * `npm run bench`: runs every benchmark and prints its figures with the target each is judged against.
 * Benchmarks are not tests: they print numbers for a person (and CI logs) to read. `npm run bench -- NAME`
 * runs one (emulator, drivers, vmc, engine).
 */
import { pathToFileURL } from "node:url";
import { benchDrivers } from "./bench-drivers.js";
import { benchEmulator } from "./bench-emulator.js";
import { benchEngine } from "./bench-engine.js";
import { benchReporting } from "./bench-reporting.js";
import { benchVmc } from "./bench-vmc.js";

type Figures = Record<string, number | string>;

const BENCHES: { name: string; what: string; targets: string; run: () => Promise<Figures> }[] = [
  {
    name: "emulator",
    what: "payment-service emulator on loopback",
    targets:
      "open loop 1,000 PoS at 1 poll/s: p99 < 5 ms; closed loop 100 connections: >= 7,000 polls/s; memory flat",
    run: benchEmulator,
  },
  {
    name: "drivers",
    what: "payment drivers, client CPU per call",
    targets: "< 1 ms CPU per call",
    run: benchDrivers,
  },
  {
    name: "vmc",
    what: "MDB adapter driver under the r,ACK flood",
    targets: "< 2% of one core at 1,000 r,ACK lines/s",
    run: benchVmc,
  },
  {
    name: "engine",
    what: "vend engine and journal",
    targets: "fsyncs per vend <= 6; added latency per vend < 5 ms",
    run: benchEngine,
  },
  {
    name: "reporting",
    what: "emulator transaction reporting, one day of 100,000 lines",
    targets: "day report in pages of 1000: < 2 s total",
    run: async () =>
      Object.fromEntries(
        (await benchReporting()).map((f) => [
          f.name,
          `${f.figure} ${f.unit} (${f.target}: ${f.pass ? "pass" : "FAIL"})`,
        ]),
      ),
  },
];

async function main(only: string | undefined): Promise<number> {
  const chosen = BENCHES.filter((b) => only === undefined || b.name === only);
  if (chosen.length === 0) {
    process.stderr.write(`unknown benchmark ${only}; valid: ${BENCHES.map((b) => b.name).join(", ")}\n`);
    return 2;
  }
  for (const b of chosen) {
    process.stdout.write(`\n== ${b.name}: ${b.what}\n   target: ${b.targets}\n`);
    const started = Date.now();
    const figures = await b.run();
    const width = Math.max(...Object.keys(figures).map((k) => k.length));
    for (const [k, v] of Object.entries(figures)) process.stdout.write(`   ${k.padEnd(width)}  ${v}\n`);
    process.stdout.write(`   (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv[2]).then(
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
