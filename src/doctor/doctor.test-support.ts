/** Test helpers of the doctor checks: a parsed config and fakes of every device (all healthy by default). */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createSimBeacon } from "../../drivers/ble/sim.js";
import { createSimGpio } from "../../drivers/gpio/sim.js";
import { createSimNfcStation } from "../../drivers/nfc/sim.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { rawV10, V10_ENV } from "../config/fixtures.test-support.js";
import { type LoadedConfig, parseConfig } from "../config/load.js";
import { ManualClock } from "../core/clock.js";
import type { DoctorDeps } from "./deps.js";
import type { CheckResult } from "./run.js";

/** Where the fake unit's journal would be; the checks only see it through the fakes. */
const JOURNAL = join(tmpdir(), "vendd-doctor-fake", "journal.db");
export const silent = pino({ level: "silent" });

export function loaded(over: Record<string, unknown> = {}): LoadedConfig {
  return parseConfig({ ...rawV10(), journal: { path: JOURNAL }, ...over }, undefined, V10_ENV);
}

/** Fakes of every device and service: all healthy unless overridden. */
export function fakeDeps(
  over: Partial<Omit<DoctorDeps, "clock">> = {},
  start = Date.UTC(2026, 10, 22, 12, 0, 0),
): DoctorDeps & { clock: ManualClock } {
  const clock = new ManualClock(start);
  return {
    clock,
    logger: silent,
    openVmc: async () => new SimVmc({ clock }),
    openGpio: async () => createSimGpio({ clock }),
    openBeacon: async () => createSimBeacon({ clock }),
    openNfc: async () => {
      const station = createSimNfcStation({ badges: [], clock });
      station.sim.plug();
      return station;
    },
    probeWritable: () => {},
    exists: () => true,
    statfs: async () => ({ bavail: 1_000_000, bsize: 4096 }),
    ntpSynchronized: async () => true,
    journalHealth: () => ({ kind: "ok", unresolved: 0, conflicts: 0, flagged: 0 }),
    fetchToken: async () => {},
    readPosUnit: async () => "123456789012345",
    dexHandshake: async () => ({ vmdCommId: "SIM0000001", role: "master" }),
    ...over,
  };
}

export function row(results: CheckResult[], check: string): CheckResult {
  const r = results.find((x) => x.check === check);
  if (r === undefined) throw new Error(`no ${check} row`);
  return r;
}

export const enoent = () => Object.assign(new Error("ENOENT: no such file or directory"), { code: "ENOENT" });
