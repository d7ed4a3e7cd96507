import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EmulatorInfo } from "../emulator/index.js";

/** Which payment interface and which engine flow the unit under test runs. */
export interface UnitShape {
  driver: "v10" | "legacy";
  flow: "selection" | "checkin";
}

/** The files of one unit under test: a config and a 0600 secrets file for `vendd run`, and its journal. */
export interface UnitFiles {
  readonly dir: string;
  readonly configPath: string;
  readonly secretsPath: string;
  readonly journalPath: string;
  /** The beacon the customers check in on: V10 `beaconId`, older interface `posUnitId` (15 digits). */
  readonly beaconId: string;
  /** Removes the directory (journal included). */
  remove(): void;
}

/**
 * Fixed beacons of the unit under test, so the simulated customer knows them (pos-v10 §14: 15 digits); one
 * per interface, because the emulator's user simulation routes a beacon to the first PoS that owns it.
 */
export const CHAOS_BEACON_ID = { v10: "424242424242424", legacy: "424242424242425" } as const;

/** Engine timeouts of the unit under test, ms: the schema's minimum is 1000 (src/config/schema.ts). */
export interface UnitTimeouts {
  paymentTimeoutMs: number;
  vendTimeoutMs: number;
}

/**
 * What the rig's units do with an approved vend whose outcome is unknown (`engine.unknownOutcome`); the
 * consistency checker is given the same policy.
 */
export const UNIT_UNKNOWN_OUTCOME = "capture" as const;

export const CHAOS_TIMEOUTS: UnitTimeouts = { paymentTimeoutMs: 4000, vendTimeoutMs: 3000 };

/**
 * Writes the unit's configuration for the emulator `info` describes: the VMC on the simulator's PTY
 * (`mdb-adapter`), no display, info-level JSON logs, the journal in a fresh temporary directory.
 */
export function writeUnitFiles(
  info: EmulatorInfo,
  shape: UnitShape,
  vmcDevice: string,
  timeouts: UnitTimeouts = CHAOS_TIMEOUTS,
): UnitFiles {
  const dir = mkdtempSync(join(tmpdir(), "vendd-chaos-"));
  const journalPath = join(dir, "journal.db");
  const config = {
    unit: { id: "chaos-1", name: "Chaos unit" },
    journal: { path: journalPath },
    display: { kind: "none" },
    ble: { enabled: false },
    nfc: { enabled: false },
    logging: { level: "info" },
    vmc: { driver: "mdb-adapter", device: vmcDevice, commandTimeoutMs: 1000, linkTimeoutMs: 5000 },
    engine: {
      flow: shape.flow,
      sessionMax: "20.00",
      paymentTimeoutMs: timeouts.paymentTimeoutMs,
      vendTimeoutMs: timeouts.vendTimeoutMs,
      unknownOutcome: UNIT_UNKNOWN_OUTCOME,
    },
    payment:
      shape.driver === "v10"
        ? {
            driver: "v10",
            v10: {
              baseUrl: info.v10.baseUrl,
              tokenUrl: info.v10.tokenUrl,
              clientId: info.v10.clientId,
              merchantVat: info.v10.merchantVat,
              storeId: info.v10.storeId,
              beaconId: CHAOS_BEACON_ID.v10,
              checkin: "poll",
              timeouts: { postMs: 1000, getMs: 500 },
              retries: { max: 2, baseDelayMs: 50, maxDelayMs: 200 },
            },
          }
        : {
            driver: "legacy",
            legacy: {
              baseUrl: info.legacy.baseUrl,
              merchantId: info.legacy.merchantId,
              locationId: info.legacy.locationId,
              posId: "chaos-unit-1",
              posUnitId: CHAOS_BEACON_ID.legacy,
              mode: "reservation",
              requestTimeoutMs: 1000,
            },
          },
  };
  const secrets =
    shape.driver === "v10"
      ? { v10: { clientSecret: info.v10.clientSecret } }
      : { legacy: { apiKey: info.legacy.apiKey, merchantKey: info.legacy.merchantKey } };
  const configPath = join(dir, "unit.json");
  const secretsPath = join(dir, "secrets.json");
  writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
  writeFileSync(secretsPath, JSON.stringify(secrets), { mode: 0o600 });
  return {
    dir,
    configPath,
    secretsPath,
    journalPath,
    beaconId: CHAOS_BEACON_ID[shape.driver],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
