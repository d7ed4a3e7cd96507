import { describe, expect, it } from "vitest";
import type { VendRecord } from "../../src/chaos/actors.js";
import { finishAndCheck, runScenario, startWorld, Unit, type UnitShape } from "../../src/chaos/index.js";
import { FAULT_POINTS, type FaultPointName } from "../../src/core/faults.js";
import { seededRandom } from "../../src/core/random.js";
import { expectQuietAndConsistent, HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

// reliability.md §7 rung 3: `vendd run` as a child, SIGKILLed by itself at every named fault point
// (VENDD_FAULT_POINT, src/core/faults.ts) of each flow with each driver; restarted (recovery runs at start);
// after each recovery the journal is quiet and every exactly-once invariant holds.

const SHAPES: readonly UnitShape[] = [
  { driver: "v10", flow: "selection" },
  { driver: "v10", flow: "checkin" },
  { driver: "legacy", flow: "selection" },
  { driver: "legacy", flow: "checkin" },
];

/**
 * Points a flow never passes, by `driver/flow`. Every point not listed here must be reached (the daemon
 * must die by SIGKILL there); a listed point must NOT be reached, so the table cannot go stale silently.
 */
const NOT_APPLICABLE: Record<string, readonly FaultPointName[]> = {
  "v10/selection": [],
  "v10/checkin": [],
  "legacy/selection": [],
  "legacy/checkin": [],
};

// The four shapes run concurrently, each with its own emulator and VMC simulator.
describe.skipIf(!HAVE_SOCAT).concurrent("crash at every fault point (SIGKILL, restart, recovery)", () => {
  for (const shape of SHAPES) {
    const key = `${shape.driver}/${shape.flow}`;
    it(`${key}: every point`, { timeout: 200_000 }, async () => {
      requireBuiltCli();
      const world = await startWorld(50);
      const unit = Unit.create(world, shape);
      const records: VendRecord[] = [];
      const reached: FaultPointName[] = [];
      const random = seededRandom(FAULT_POINTS.length * 7919 + key.length);
      try {
        for (const [i, point] of FAULT_POINTS.entries()) {
          const armed = unit.launch({ env: { VENDD_FAULT_POINT: point } });
          let fired = false;
          const killed = armed.whenExited().then((e) => {
            fired = e.signal === "SIGKILL";
            return fired;
          });
          // Vends until the point fires (at most 4: a point a flow passes is passed by every vend).
          const scenario = runScenario(unit, {
            vends: 4,
            random,
            firstIndex: i * 10,
            successRate: 1,
            until: () => fired,
          });
          const died = await Promise.race([killed, scenario.then(() => false)]);
          if (died) {
            reached.push(point);
            unit.kills++;
            await unit.start();
          }
          records.push(...(await scenario).records);
          if (!died) {
            // Not reached in this flow: the unit restarts unarmed all the same.
            await unit.crash();
            await unit.start();
          }
          await expectQuietAndConsistent(unit, records);
          await unit.crash();
        }
        const notReached = FAULT_POINTS.filter((p) => !reached.includes(p));
        expect(notReached).toEqual(NOT_APPLICABLE[key] ?? []);
        const report = await finishAndCheck(unit, records);
        expect(report.problems).toEqual([]);
        expect(report.unresolved).toBe(0);
      } finally {
        await world.close();
      }
    });
  }
});
