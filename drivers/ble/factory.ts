import type { AdvertiserOptions, RadioLike } from "./advertiser.js";
import { type BeaconAdvertiser, BeaconError, type BeaconKind } from "./beacon.js";

const KINDS: readonly BeaconKind[] = ["bleno", "sim"];

/**
 * Creates the BLE beacon the board profile names. `bleno` imports @abandonware/bleno only here: the
 * module opens an HCI socket at import time and throws where the kernel has no Bluetooth (EAFNOSUPPORT),
 * so a failed import yields a beacon that stays `degraded` with the reason instead of an error.
 * @throws BeaconError `unknownKind` for a kind outside `bleno | sim` (unchecked config).
 */
export async function createBeacon(kind: BeaconKind, opts: AdvertiserOptions): Promise<BeaconAdvertiser> {
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
      throw new BeaconError(
        "unknownKind",
        `unknown beacon kind ${JSON.stringify(String(kind))}; valid: ${KINDS.join(", ")}`,
      );
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
