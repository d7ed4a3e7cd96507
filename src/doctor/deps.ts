import { execFile } from "node:child_process";
import { closeSync, constants, existsSync, openSync } from "node:fs";
import { statfs } from "node:fs/promises";
import type { Logger } from "pino";
import type { BeaconAdvertiser } from "../../drivers/ble/beacon.js";
import type { GpioPort } from "../../drivers/gpio/port.js";
import type { NfcStation } from "../../drivers/nfc/station.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import type { Secrets, VenddConfig } from "../config/load.js";
import { beaconOptions, gpioOptions, nfcOptions, vmcOptions } from "../config/seams.js";
import type { Clock } from "../core/clock.js";
import { type JournalHealth, journalHealth } from "../journal/health.js";
import { fetchServiceToken, readAssignedPosUnit } from "./paymentProbe.js";

/** Everything a check touches outside the process: real devices by default, fakes in tests. */
export interface DoctorDeps {
  clock: Clock;
  logger: Logger;
  /** The configured vend controller, not yet opened. */
  openVmc(config: VenddConfig): Promise<VendController>;
  /** The configured GPIO port, not yet opened. */
  openGpio(config: VenddConfig): Promise<GpioPort>;
  openBeacon(config: VenddConfig): Promise<BeaconAdvertiser>;
  openNfc(config: VenddConfig): Promise<NfcStation>;
  /** Opens `path` for writing without creating it (O_NOCTTY) and closes it; throws the system error. */
  probeWritable(path: string): void;
  exists(path: string): boolean;
  /**
   * Free space for unprivileged users at the directory `dir`: blocks available and block size in bytes.
   * Rejects with ENOTDIR when `dir` or a parent is not a directory, ENOENT when it does not exist.
   */
  statfs(dir: string): Promise<{ bavail: number; bsize: number }>;
  /** `timedatectl show -p NTPSynchronized`: true/false, or null when timedatectl is not available. */
  ntpSynchronized(): Promise<boolean | null>;
  /** The journal's health, read-only (src/journal/health.ts). */
  journalHealth(path: string): JournalHealth;
  /** Fetches one V10 token with the client credentials; rejects with a PaymentError. */
  fetchToken(config: VenddConfig, secrets: Secrets, signal: AbortSignal): Promise<void>;
  /** One signed read-only legacy request (ReadPoSAssignPoSUnitId): the PoSUnitId, null if unregistered. */
  readPosUnit(config: VenddConfig, secrets: Secrets, signal: AbortSignal): Promise<string | null>;
  /** A DEX handshake only (no audit read) on `dex.device`; rejects with the reader's DexError. */
  dexHandshake(config: VenddConfig, signal: AbortSignal): Promise<{ vmdCommId: string; role: string }>;
}

/** The real dependencies. Drivers are imported by their factories, only when their check runs. */
export function defaultDoctorDeps(clock: Clock, logger: Logger): DoctorDeps {
  const deviceDeps = { clock, logger };
  return {
    clock,
    logger,
    async openVmc(config) {
      const { createVendController } = await import("../../drivers/vmc/factory.js");
      return createVendController(vmcOptions(config), deviceDeps);
    },
    async openGpio(config) {
      const { createGpio } = await import("../../drivers/gpio/factory.js");
      return createGpio(gpioOptions(config), deviceDeps);
    },
    async openBeacon(config) {
      const { createBeacon } = await import("../../drivers/ble/factory.js");
      return createBeacon(beaconOptions(config), deviceDeps);
    },
    async openNfc(config) {
      if (config.nfc.kind === "sim") {
        // The simulated board's reader is always plugged in, like its other simulated devices.
        const { createSimNfcStation } = await import("../../drivers/nfc/sim.js");
        const station = createSimNfcStation({
          badges: nfcOptions(config).badges,
          clock,
          logger: logger.child({ component: "nfc" }),
        });
        station.sim.plug();
        return station;
      }
      const { createNfc } = await import("../../drivers/nfc/factory.js");
      return createNfc(nfcOptions(config), deviceDeps);
    },
    probeWritable(path) {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NOCTTY));
    },
    exists: (path) => existsSync(path),
    async dexHandshake(config, signal) {
      const { DexReader } = await import("../../drivers/dex/reader.js");
      const reader = await DexReader.open({
        path: config.dex.device ?? "",
        commId: config.dex.commId,
        clock,
        attempts: 1,
      });
      const close = () => void reader.close();
      signal.addEventListener("abort", close, { once: true });
      try {
        const hs = await reader.read(true);
        return { vmdCommId: hs.vmdCommId, role: hs.role };
      } finally {
        signal.removeEventListener("abort", close);
        await reader.close();
      }
    },
    async statfs(dir) {
      // The trailing slash makes the kernel require a directory: statfs of a regular file would succeed
      // and report its file system's free space (ENOTDIR now).
      const s = await statfs(dir.endsWith("/") ? dir : `${dir}/`);
      return { bavail: s.bavail, bsize: s.bsize };
    },
    ntpSynchronized: () =>
      new Promise((resolve) => {
        execFile(
          "timedatectl",
          ["show", "-p", "NTPSynchronized", "--value"],
          { timeout: 2000 },
          (err, stdout) => {
            const value = String(stdout).trim();
            resolve(err ? null : value === "yes" ? true : value === "no" ? false : null);
          },
        );
      }),
    // Read-only: the daemon is the journal's only writer (reliability.md §1).
    journalHealth: (path) => journalHealth(path),
    fetchToken: (config, secrets, signal) => fetchServiceToken(config, secrets, { clock, signal }),
    readPosUnit: (config, secrets, signal) => readAssignedPosUnit(config, secrets, { clock, logger, signal }),
  };
}
