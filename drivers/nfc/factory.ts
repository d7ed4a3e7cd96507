import { createConnection } from "node:net";
import type { Logger } from "pino";
import type { Clock } from "../../src/core/clock.js";
import { wrongBuild } from "../../src/core/nativeBuild.js";
import { unknownKind } from "../../src/core/seams.js";
import type { BadgeEntry } from "./badges.js";
import type { NfcKind, NfcLike, NfcStation } from "./station.js";

/** What the NFC station is (plain data, from src/config/seams.ts): the reader kind and the badge hashes. */
export interface NfcOptions {
  kind: NfcKind;
  /** Technician badges: names and scrypt hashes of their UIDs, never the UIDs. */
  badges: readonly BadgeEntry[];
  /** `sim` only: the Unix socket the simulated reader takes `present <uid>` / `remove` lines on. */
  simFeed?: string;
}

/** The station's collaborators. */
export interface NfcDeps {
  clock: Clock;
  logger?: Logger;
}

export const NFC_KINDS: readonly NfcKind[] = ["pcsc", "sim"];

/**
 * Creates the NFC station the options name. `pcsc` imports nfc-pcsc (a native PC/SC binding, needs pcscd)
 * only here; when it cannot be loaded or started the station stays `degraded` with the reason. `sim` is
 * the station over a `SimNfc` (see `createSimNfcStation` to reach the simulated readers).
 * @throws SeamConfigError for a kind outside `pcsc | sim` (unchecked input).
 */
export async function createNfc(options: NfcOptions, deps: NfcDeps): Promise<NfcStation> {
  const station = {
    badges: options.badges,
    clock: deps.clock,
    ...(deps.logger ? { logger: deps.logger.child({ component: "nfc" }) } : {}),
  };
  switch (options.kind) {
    case "pcsc": {
      const { createNfcStation } = await import("./station.js");
      const loaded = await startPcsc();
      // pcscd may be started later: asked again with backoff. A module that cannot load stays so.
      const retry = loaded.reason.startsWith("pcscd ") ? { retry: () => startPcsc() } : {};
      return createNfcStation({
        ...station,
        kind: "pcsc",
        nfc: loaded.nfc,
        unavailable: loaded.reason,
        ...retry,
      });
    }
    case "sim": {
      const { createSimNfcStation } = await import("./sim.js");
      const sim = createSimNfcStation(station);
      if (options.simFeed === undefined) return sim;
      const { startSimFeed } = await import("./simFeed.js");
      return startSimFeed(sim, options.simFeed, deps.logger);
    }
    default:
      throw unknownKind("nfc", options, NFC_KINDS);
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
    const message = err instanceof Error ? err.message : "";
    // The system library PC/SC needs, or a build for another board: said as such.
    if (message.includes("libpcsclite.so"))
      return {
        nfc: null,
        reason: "module not available: libpcsclite.so.1 is missing (apt-get install pcscd libccid)",
      };
    const wrong = wrongBuild(err);
    if (wrong !== null) return { nfc: null, reason: `module not available: ${wrong}`.slice(0, 200) };
    return { nfc: null, reason: `module not available: ${code}`.slice(0, 200) };
  }
  if (typeof Nfc !== "function") return { nfc: null, reason: "module not available: no NFC export" };
  // nfc-pcsc's constructor retries SCardEstablishContext for as long as the service is missing: a busy
  // loop that never returns. Only a listening pcscd is handed to it.
  const down = await pcscdDown(pcscSocketPath(process.env));
  if (down !== null) return { nfc: null, reason: down };
  try {
    return { nfc: Reflect.construct(Nfc, []) as NfcLike, reason: "" };
  } catch (err) {
    return { nfc: null, reason: `pcsc: ${err instanceof Error ? err.message : String(err)}`.slice(0, 200) };
  }
}

/** The socket libpcsclite connects to: PCSCLITE_CSOCK_NAME, else Debian's (ipcdir /run/pcscd). */
export function pcscSocketPath(env: NodeJS.ProcessEnv): string {
  const named = env.PCSCLITE_CSOCK_NAME;
  return named !== undefined && named !== "" ? named : "/run/pcscd/pcscd.comm";
}

const PROBE_TIMEOUT_MS = 2000;

/**
 * Why pcscd cannot be reached at `socket` (no socket file, or nothing listening on it), or null when a
 * connection is accepted (socket activation starts pcscd on that first connection). Bounded by 2 s.
 */
export function pcscdDown(socket: string): Promise<string | null> {
  const down = `pcscd is not running (nothing listens on ${socket}): apt-get install pcscd libccid; systemctl enable --now pcscd.socket`;
  return new Promise((resolve) => {
    const conn = createConnection({ path: socket });
    const done = (result: string | null) => {
      clearTimeout(timer);
      conn.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => done(`pcscd does not answer on ${socket}: systemctl status pcscd`),
      PROBE_TIMEOUT_MS,
    );
    conn.once("connect", () => done(null));
    conn.once("error", () => done(down));
  });
}
