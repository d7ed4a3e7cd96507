import type { Logger } from "pino";
import type { Clock } from "../../src/core/clock.js";
import { unknownKind } from "../../src/core/seams.js";
import type { AdvertiserOptions, RadioLike } from "./advertiser.js";
import type { BeaconAdvertiser, BeaconKind } from "./beacon.js";

/** What the beacon is (plain data, from src/config/seams.ts): the kind and the advertisement's settings. */
export type BeaconOptions = { kind: BeaconKind } & Omit<AdvertiserOptions, "clock" | "logger">;

/** The beacon's collaborators. */
export interface BeaconDeps {
  clock: Clock;
  logger?: Logger;
}

export const BEACON_KINDS: readonly BeaconKind[] = ["bleno", "sim"];

/**
 * Creates the BLE beacon the options name. `bleno` imports @abandonware/bleno only here: the module opens
 * an HCI socket at import time and throws where the kernel has no Bluetooth (EAFNOSUPPORT), so a failed
 * import yields a beacon that stays `degraded` with the reason instead of an error.
 * @throws SeamConfigError for a kind outside `bleno | sim` (unchecked input).
 */
export async function createBeacon(options: BeaconOptions, deps: BeaconDeps): Promise<BeaconAdvertiser> {
  const { kind, ...settings } = options;
  const opts: AdvertiserOptions = {
    ...settings,
    clock: deps.clock,
    ...(deps.logger ? { logger: deps.logger.child({ component: "ble" }) } : {}),
  };
  switch (kind) {
    case "bleno": {
      const { createRadioAdvertiser } = await import("./advertiser.js");
      const loaded = await loadBleno();
      return createRadioAdvertiser("bleno", loaded.radio, loaded.reason, opts);
    }
    case "sim": {
      const { createSimBeacon } = await import("./sim.js");
      return createSimBeacon(opts);
    }
    default:
      throw unknownKind("ble", options, BEACON_KINDS);
  }
}
/** Imports bleno's singleton; on failure returns the reason ("module not available: ..."). */
export async function loadBleno(
  specifier = "@abandonware/bleno",
): Promise<{ radio: RadioLike | null; reason: string }> {
  try {
    const mod: unknown = await import(specifier);
    const radio = isObject(mod) && isRadio(mod.default) ? mod.default : isRadio(mod) ? mod : null;
    return radio === null
      ? { radio: null, reason: "module not available: unexpected bleno export" }
      : { radio, reason: "" };
  } catch (err) {
    const code = isObject(err) && typeof err.code === "string" ? err.code : "";
    const text = err instanceof Error ? err.message : String(err);
    return { radio: null, reason: `module not available: ${code || text}`.slice(0, 200) };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function isRadio(v: unknown): v is RadioLike {
  return (
    isObject(v) &&
    typeof v.on === "function" &&
    typeof v.removeListener === "function" &&
    typeof v.startAdvertisingWithEIRData === "function" &&
    typeof v.stopAdvertising === "function"
  );
}
