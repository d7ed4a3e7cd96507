/**
 * A built `vendd run` daemon with DEX reads enabled on a PTY where the VMC-side DEX simulator answers, its
 * own emulator, and the technician console's socket: the set-up of the DEX console tests. Everything it
 * starts is pushed onto `cleanups` (stopped in reverse order by the caller's afterEach).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DexSimulator, startDexSimulator } from "../../drivers/dex/simulator/index.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CANARY_SECRET, Supervised, writeUnit } from "./console.js";
import { requireBuiltCli } from "./daemon.js";

export interface DexUnitOptions {
  /** The machine ignores every ENQ (the read fails after its attempts); the daemon is awaited until it says so. */
  silent?: boolean;
  /** `dex.attempts` (default 1). */
  attempts?: number;
  /** The temporary directory's prefix. */
  prefix?: string;
  /** Who sends the first ENQ: the machine as `master` (older controllers) or the unit (default). */
  role?: "slave" | "master";
  /** Record the wire at the simulator (`sim.trace`). */
  trace?: boolean;
  /** More config lines (e.g. a `fleet` section). */
  extra?: (dir: string) => string[];
}

export interface DexUnit {
  dir: string;
  sim: DexSimulator;
  socket: string;
  daemon: Supervised;
}

export async function unitWithDex(
  cleanups: (() => Promise<unknown>)[],
  pinHash: string,
  o: DexUnitOptions = {},
): Promise<DexUnit> {
  requireBuiltCli();
  const silent = o.silent ?? false;
  const dir = mkdtempSync(join(tmpdir(), o.prefix ?? "vendd-dex-unit-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const sim = await startDexSimulator({
    linkPath: join(dir, "dex"),
    role: o.role ?? "slave",
    trace: o.trace ?? false,
  });
  cleanups.push(() => sim.close());
  sim.vmd.faults.silent = silent;
  const emu: Emulator = await startEmulator({
    pollDelayMs: 50,
    seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
  });
  cleanups.push(() => emu.close());
  const files = writeUnit(dir, emu, pinHash, [
    "dex:",
    "  enabled: true",
    `  device: ${sim.devicePath}`,
    "  quietSeconds: 1",
    `  attempts: ${o.attempts ?? 1}`,
    ...(o.extra?.(dir) ?? []),
  ]);
  const daemon = new Supervised(
    ["run", "--config", files.config, "--secrets", files.secrets],
    join(dir, "daemon.pid"),
  );
  cleanups.push(() => daemon.stop());
  // a fresh unit reads at start (its baseline); a silent machine makes that read fail
  await daemon.waitRuns(1, silent ? "DEX read missed" : "unit in service");
  return { dir, sim, socket: join(dir, "control.sock"), daemon };
}
