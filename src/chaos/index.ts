import { seededRandom } from "../core/random.js";
import { startWorld, Unit } from "./rig.js";
import { finishAndCheck, runScenario } from "./scenario.js";

export type { VendRecord } from "./actors.js";
export { readJournal, unresolvedCount } from "./journalView.js";
export { startWorld, Unit, type World } from "./rig.js";
export { checkUnit, finishAndCheck, type KillSchedule, runScenario } from "./scenario.js";
export { CHAOS_BEACON_ID, type UnitShape } from "./unitFiles.js";

export interface ChaosOptions {
  seed: number;
  /** Vend requests the simulated VMC makes. */
  vends: number;
  driver: "v10" | "legacy";
  flow: "selection" | "checkin";
  /** Progress: one line per vend request (`vend N/M: PRICE OUTCOME`). */
  out?: NodeJS.WritableStream;
  signal?: AbortSignal;
}

export interface ChaosSummary {
  vends: number;
  captured: number;
  cancelled: number;
  denied: number;
  consistent: boolean;
  problems: string[];
  kills: number;
}

/**
 * The chaos self-check (`vendd demo --chaos SEED`): the real daemon (`vendd run`, built CLI) as a child
 * against the in-process emulator and the VMC simulator on a PTY; SIGKILL at seeded random moments with a
 * restart each time (recovery runs at start), seeded emulator faults on the payment routes (bounded), then
 * the exactly-once invariants on the journal and the ledger (reliability.md §7 rung 3).
 */
export async function runChaos(opts: ChaosOptions): Promise<ChaosSummary> {
  const world = await startWorld(50);
  const unit = Unit.create(world, { driver: opts.driver, flow: opts.flow });
  try {
    await unit.start();
    const legacy = opts.driver === "legacy";
    const { records } = await runScenario(unit, {
      vends: opts.vends,
      random: seededRandom(opts.seed),
      chaosRandom: seededRandom(opts.seed ^ 0x5bd1e995),
      kills: legacy
        ? { minMs: 1500, maxMs: 6000, from: "ready" }
        : { minMs: 300, maxMs: 3000, from: "ready" },
      faults: Math.ceil(opts.vends / 5),
      out: opts.out,
      signal: opts.signal,
    });
    const report = await finishAndCheck(unit, records);
    const problems = [...report.problems];
    if (report.unresolved > 0)
      problems.push(`${report.unresolved} session(s) still unresolved after recovery`);
    return {
      vends: records.length,
      captured: report.captured,
      cancelled: report.cancelled,
      denied: report.denied,
      consistent: problems.length === 0,
      problems,
      kills: unit.kills,
    };
  } finally {
    await unit.dispose();
    await world.close();
  }
}
