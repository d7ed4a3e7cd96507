import type { LoadedConfig } from "../config/load.js";
import type { DoctorDeps } from "./deps.js";
import { displayCheck, gpioCheck, vmcCheck } from "./devices.js";
import { dexCheck } from "./dex.js";
import { nativeCheck } from "./native.js";
import { paymentCheck, skipped } from "./payment.js";
import { bleCheck, nfcCheck } from "./radio.js";
import { type CheckResult, runChecks } from "./run.js";
import { clockCheck, diskCheck, journalCheck } from "./system.js";

/**
 * The checks for a loaded configuration, in the order they run: the unit itself first (clock, disk,
 * journal), then each configured device, then the payment service. Disabled devices are skipped.
 */
export function doctorChecks(loaded: LoadedConfig, deps: DoctorDeps) {
  const { config, secrets } = loaded;
  return [
    clockCheck(deps),
    diskCheck(config, deps),
    nativeCheck(),
    journalCheck(config, deps),
    vmcCheck(config, deps),
    config.dex.enabled ? dexCheck(config, deps) : skipped("dex", "dex.enabled is false"),
    displayCheck(config, deps),
    gpioCheck(config, deps),
    config.ble.enabled ? bleCheck(config, deps) : skipped("ble", "ble.enabled is false"),
    config.nfc.enabled ? nfcCheck(config, deps) : skipped("nfc", "nfc.enabled is false"),
    paymentCheck(config, secrets, deps),
  ];
}

/** Runs every check for `loaded` and returns the rows of the table. */
export function runDoctor(loaded: LoadedConfig, deps: DoctorDeps): Promise<CheckResult[]> {
  return runChecks(doctorChecks(loaded, deps), deps.clock);
}
