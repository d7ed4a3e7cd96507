import { NfcError } from "./errors.js";
import type { NfcKind, NfcLike, NfcStation, StationOptions } from "./station.js";

export type NfcOptions = Omit<StationOptions, "kind" | "nfc" | "unavailable">;

const KINDS: readonly NfcKind[] = ["pcsc", "sim"];

/**
 * Creates the NFC station the board profile names. `pcsc` imports nfc-pcsc (a native PC/SC binding,
 * needs pcscd) only here; when it cannot be loaded or started the station stays `degraded` with the
 * reason. `sim` is the station over a `SimNfc` (see `createSimNfcStation` to reach the simulated readers).
 * @throws NfcError `config` for a kind outside `pcsc | sim` (unchecked config).
 */
export async function createNfc(kind: NfcKind, opts: NfcOptions): Promise<NfcStation> {
  switch (kind) {
    case "pcsc": {
      const { createNfcStation } = await import("./station.js");
      const loaded = await startPcsc();
      return createNfcStation({ ...opts, kind, nfc: loaded.nfc, unavailable: loaded.reason });
    }
    case "sim": {
      const { createSimNfcStation } = await import("./sim.js");
      return createSimNfcStation(opts);
    }
    default:
      throw new NfcError(
        "config",
        `unknown nfc kind ${JSON.stringify(String(kind))}; valid: ${KINDS.join(", ")}`,
      );
  }
}

/** Imports nfc-pcsc and creates its NFC object; on failure returns the reason ("module not available"). */
export async function startPcsc(specifier = "nfc-pcsc"): Promise<{ nfc: NfcLike | null; reason: string }> {
  let Nfc: unknown;
  try {
    const mod: unknown = await import(specifier);
    const ns = typeof mod === "object" && mod !== null ? (mod as Record<string, unknown>) : {};
    const cjs = ns.default;
    Nfc =
      ns.NFC ?? (typeof cjs === "object" && cjs !== null ? (cjs as Record<string, unknown>).NFC : undefined);
  } catch (err) {
    const code = typeof err === "object" && err !== null && "code" in err ? String(err.code) : String(err);
    return { nfc: null, reason: `module not available: ${code}`.slice(0, 200) };
  }
  if (typeof Nfc !== "function") return { nfc: null, reason: "module not available: no NFC export" };
  try {
    return { nfc: Reflect.construct(Nfc, []) as NfcLike, reason: "" };
  } catch (err) {
    return { nfc: null, reason: `pcsc: ${err instanceof Error ? err.message : String(err)}`.slice(0, 200) };
  }
}
