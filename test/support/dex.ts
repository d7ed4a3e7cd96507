/**
 * A completed DEX read of a simulated machine as the unit journals it (`recordDexRead`): the machine's
 * audit file at `at`, parsed, its counters, the read marked completed at the machine. Shared by the fleet's
 * DEX tests, which journal reads without a serial port.
 */
import { countersOf } from "../../drivers/dex/counters.js";
import { parseEvaDts } from "../../drivers/dex/evadts.js";
import type { DexMachine } from "../../drivers/dex/simulator/machine.js";
import type { NewDexRead } from "../../src/journal/dexStore.js";

export function machineRead(machine: DexMachine, readId: string, at: number): NewDexRead {
  const raw = machine.auditFile(new Date(at));
  machine.readCompleted();
  const report = parseEvaDts(raw);
  return {
    readId,
    at,
    trigger: "schedule",
    outcome: "ok",
    role: "master",
    attempts: 1,
    raw,
    counters: countersOf(report),
    g85: report.check.g85,
    warnings: 0,
    error: null,
  };
}
