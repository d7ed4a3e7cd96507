import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createSimDisplay, type SimDisplay } from "../../drivers/display/sim.js";
import { SimVmc } from "../../drivers/vmc/sim.js";
import { unresolvedCount } from "../../src/chaos/journalView.js";
import { type LoadedConfig, loadConfig } from "../../src/config/load.js";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import type { Notifier } from "../../src/core/sdnotify.js";
import { type Daemon, type DaemonDeps, startDaemon } from "../../src/daemon/daemon.js";
import type { ReasonCode } from "../../src/daemon/status.js";

/**
 * In-process daemon tests: the real `startDaemon` on a ManualClock with the sim VMC and sim display, the
 * real V10 driver over loopback HTTP (or an injected driver), a real SQLite journal in a temp directory.
 */

/** A notifier that records what systemd would have received. */
export interface RecordingNotifier extends Notifier {
  readonly readies: string[];
  readonly statuses: string[];
}

export function recordingNotifier(): RecordingNotifier {
  const readies: string[] = [];
  const statuses: string[] = [];
  return {
    enabled: true,
    readies,
    statuses,
    ready: (status) => readies.push(status ?? ""),
    status: (text) => statuses.push(text),
    stopping: () => {},
    startWatchdog: () => () => {},
  };
}

/** A loopback port nobody listens on (connection refused), free for a server to take later. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export interface V10Target {
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Brand and location of the emulator's default store (stable across emulator restarts). */
  merchantVat: string;
  merchantBrandId: string;
  merchantLocationId: string;
}

/** A V10 target nobody listens on (port 9): for units whose payment provider must never be reached. */
export const NOWHERE: V10Target = {
  baseUrl: "http://127.0.0.1:9",
  tokenUrl: "http://127.0.0.1:9/t",
  clientId: "c",
  clientSecret: "s",
  merchantVat: "DK12345678",
  merchantBrandId: "b",
  merchantLocationId: "l",
};

/** Writes a unit config for the V10 driver (short timeouts, no driver retries) and loads it. */
export function v10Unit(dir: string, unitId: string, t: V10Target): LoadedConfig {
  const config = join(dir, "unit.yaml");
  writeFileSync(
    config,
    [
      `unit: { id: ${unitId}, name: Degraded test unit }`,
      `journal: { path: ${join(dir, "journal.db")} }`,
      "display: { kind: none }",
      "payment:",
      "  driver: v10",
      "  v10:",
      `    baseUrl: ${t.baseUrl}`,
      `    tokenUrl: ${t.tokenUrl}`,
      `    clientId: ${t.clientId}`,
      `    merchantVat: ${t.merchantVat}`,
      `    merchantBrandId: "${t.merchantBrandId}"`,
      `    merchantLocationId: "${t.merchantLocationId}"`,
      "    timeouts: { postMs: 150, getMs: 150 }",
      "    retries: { max: 0 }",
    ].join("\n"),
    { mode: 0o600 },
  );
  const secrets = join(dir, "secrets.yaml");
  writeFileSync(secrets, `v10: { clientSecret: ${t.clientSecret} }\n`, { mode: 0o600 });
  return loadConfig(config, { secretsFile: secrets, env: {} });
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "vendd-degraded-"));
}

export interface TestDaemon {
  daemon: Daemon;
  clock: ManualClock;
  vmc: SimVmc;
  display: SimDisplay;
  notifier: RecordingNotifier;
  /** Unresolved sessions in the journal at each moment the VMC was opened or enabled. */
  enabledWithUnresolved: number[];
  /** Moves virtual time forward in steps, giving real I/O a moment between steps. */
  advance(ms: number): Promise<void>;
  /** Advances until `cond` holds; throws after `maxMs` of virtual time and 10 s of real time. */
  until(cond: () => boolean, maxMs?: number, what?: string): Promise<void>;
  codes(): ReasonCode[];
}

/** Starts the daemon in process on its config's journal path (read-only views check the VMC's enabling). */
export async function startTestDaemon(
  loaded: LoadedConfig,
  opts: { deps?: Partial<DaemonDeps>; clock?: ManualClock } = {},
): Promise<TestDaemon> {
  const unresolved = () => unresolvedCount(loaded.config.journal.path);
  const clock = opts.clock ?? new ManualClock(Date.now());
  const vmc = new SimVmc({ clock, dispenseMs: 300 });
  const display = createSimDisplay();
  const notifier = recordingNotifier();
  const enabledWithUnresolved: number[] = [];
  const open = vmc.open.bind(vmc);
  const setEnabled = vmc.setEnabled.bind(vmc);
  vmc.open = async () => {
    enabledWithUnresolved.push(unresolved());
    await open();
  };
  vmc.setEnabled = async (enabled: boolean) => {
    if (enabled) enabledWithUnresolved.push(unresolved());
    await setEnabled(enabled);
  };
  const daemon = await startDaemon(loaded, {
    logger: pino({ level: "silent" }),
    notifier,
    clock,
    // Virtual time runs 100 times faster than real time here: a request's deadline must not.
    requestClock: systemClock,
    random: () => 0.5,
    stderr: () => {},
    ...opts.deps,
    devices: { vmc, display, ...opts.deps?.devices },
  });
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 200) {
      clock.advance(Math.min(200, ms - t));
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const until = async (cond: () => boolean, maxMs = 60_000, what = "condition") => {
    // Virtual time up to maxMs; then real time only (an answer the service has not given yet), bounded.
    const realDeadline = Date.now() + 10_000;
    for (let t = 0; !cond(); ) {
      if (t < maxMs) {
        await advance(200);
        t += 200;
      } else if (Date.now() < realDeadline) {
        await new Promise((r) => setTimeout(r, 10));
      } else {
        throw new Error(`${what} not reached within ${maxMs} ms of virtual time`);
      }
    }
  };
  const codes = () => daemon.status().reasons.map((r) => r.code);
  return { daemon, clock, vmc, display, notifier, enabledWithUnresolved, advance, until, codes };
}
