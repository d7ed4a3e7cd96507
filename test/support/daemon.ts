import { existsSync } from "node:fs";
import { expect } from "vitest";
import { socatAvailable } from "../../drivers/vmc/simulator/index.js";
import type { VendRecord } from "../../src/chaos/actors.js";
import { waitUntil } from "../../src/chaos/actors.js";
import { BUILT_CLI } from "../../src/chaos/daemonProcess.js";
import { unresolvedCount } from "../../src/chaos/journalView.js";
import { Unit, type World } from "../../src/chaos/rig.js";
import { checkUnit, finishAndCheck, type KillSchedule, runScenario } from "../../src/chaos/scenario.js";
import type { UnitShape } from "../../src/chaos/unitFiles.js";
import { seededRandom } from "../../src/core/random.js";

/** The crash tests run the built daemon (`npm test` builds first) against the VMC simulator on a PTY. */
export const HAVE_SOCAT = socatAvailable();

/** Fails loudly when the CLI was not built: a crash test that silently did nothing would prove nothing. */
export function requireBuiltCli(): void {
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first`);
}

/**
 * Waits (bounded) until the live journal has no unresolved session (the older interface's idle payment
 * aside), then checks every invariant on a read-only snapshot while the daemon keeps running.
 */
export async function expectQuietAndConsistent(unit: Unit, records: readonly VendRecord[]): Promise<void> {
  const path = unit.files.journalPath;
  const quiet = await waitUntil(() => unresolvedCount(path, unit.keepsIdlePayment) === 0, 15_000);
  expect(quiet, `journal not quiet:\n${unit.daemon?.tail() ?? ""}`).toBe(true);
  const report = checkUnit(unit, records);
  expect(report.problems).toEqual([]);
}

/** One random-kill run: the kills wanted, their schedule, and the seed. */
export interface RandomKillPlan {
  shape: UnitShape;
  kills: number;
  schedule: KillSchedule;
  seed: number;
}

/**
 * SIGKILLs the daemon at seeded random moments (counted from each spawn, so kills also land in start-up and
 * recovery) while the VMC keeps requesting vends, until `plan.kills` kills; then lets recovery finish and
 * checks every invariant on the journal, the ledger and the VMC's approvals.
 */
export async function expectSurvivesRandomKills(world: World, plan: RandomKillPlan): Promise<void> {
  const unit = Unit.create(world, plan.shape);
  try {
    unit.launch();
    const { records } = await runScenario(unit, {
      vends: plan.kills * 10,
      random: seededRandom(plan.seed),
      chaosRandom: seededRandom(plan.seed * 31 + 7),
      kills: plan.schedule,
      until: () => unit.kills >= plan.kills,
    });
    expect(unit.kills).toBeGreaterThanOrEqual(plan.kills);
    expect(records.some((r) => r.outcome === "success")).toBe(true);
    const report = await finishAndCheck(unit, records);
    expect(report.problems).toEqual([]);
    expect(report.unresolved).toBe(0);
  } finally {
    await unit.dispose();
  }
}
