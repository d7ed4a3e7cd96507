/**
 * The context of one applier run (src/update/apply.ts): the seams it is given, the update settings of the
 * config in force, the lock that keeps to one applier at a time, and how outcomes and refusals are recorded.
 */

import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { VenddConfig } from "../config/load.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import type { Clock } from "../core/clock.js";
import type { UpdateFaultPoints } from "../core/faults.js";
import type { BundleStep } from "../core/fleetWire.js";
import type { BundleError, VerifiedBundle } from "./bundle.js";
import type { GateOptions, HealthProbe } from "./health.js";
import { type PublicKey, parsePublicKey } from "./minisign.js";
import { type OutcomeResult, readState, type UpdateOutcome, writeState } from "./state.js";

/** A bundle refused before anything changed; `code` says which check. */
export class ApplyRefusal extends Error {
  override readonly name = "ApplyRefusal";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the applier needs from the config in force. */
export interface UpdateSettings {
  unitId: string;
  fleet: string | null;
  keys: PublicKey[];
  threshold: number;
  stateDir: string;
  releaseRoot: string;
  health: GateOptions;
}

export function updateSettingsOf(config: VenddConfig): UpdateSettings {
  const u = config.updates;
  return {
    unitId: config.unit.id,
    fleet: u.fleet,
    keys: u.publicKeys.map((k) => parsePublicKey(k)),
    threshold: u.threshold,
    stateDir: u.stateDir,
    releaseRoot: u.releaseRoot,
    health: u.health,
  };
}

/** The applier's seams: production wires systemd, the control socket and the real clock. */
export interface ApplyEnv {
  /** The config file the daemon runs with (`/etc/vendd/config.yaml`). */
  configFile: string;
  /** Loads and validates a config file with the schema (src/config/load.ts `loadConfig`). */
  loadConfig(file: string): VenddConfig;
  /** Restarts the daemon (`systemctl restart vendd.service`). */
  restart(): Promise<void>;
  /** How to ask the daemon running with `config` for its health (its control socket). */
  probeFor(config: VenddConfig): HealthProbe;
  clock: Clock;
  faults: UpdateFaultPoints;
  /** Progress lines for the operator (no secrets pass through here). */
  log(line: string): void;
  /**
   * Issue 41: each step of a signed bundle as it happens (stepSpool.ts in production, for the daemon to
   * send to the fleet). A failure to record one is logged and never changes the apply.
   */
  step?(s: { sha256: string; step: BundleStep; reason: string }): void;
}

/** Records a step through `env.step`, if any; never throws. */
export function reportStep(env: ApplyEnv, sha256: string | undefined, step: BundleStep, reason = ""): void {
  if (sha256 === undefined || env.step === undefined) return;
  try {
    env.step({ sha256, step, reason });
  } catch (err) {
    env.log(
      `the ${step} step could not be recorded for the fleet: ${err instanceof Error ? err.message : "error"}`,
    );
  }
}

export function iso(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

export function stagedPath(configFile: string): string {
  return join(dirname(configFile), `.${basename(configFile)}.staged`);
}

/** Writes `data` to `path` like the file at `like` (mode, owner): the daemon must still read the config. */
export function writeLike(path: string, data: Buffer | string, like: string): void {
  let mode = 0o644;
  let owner: { uid: number; gid: number } | null = null;
  try {
    const st = statSync(like);
    mode = st.mode & 0o777;
    owner = { uid: st.uid, gid: st.gid };
  } catch {
    // No file to copy from (a first install): the default mode.
  }
  writeFileAtomic(path, data, { mode });
  chmodSync(path, mode);
  if (owner !== null && process.getuid?.() === 0) chownSync(path, owner.uid, owner.gid);
}

/** A lock file in the state directory: one applier at a time (the inbox path unit and the pull timer). */
function takeLock(stateDir: string): () => void {
  const lock = join(stateDir, "apply.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx", 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = Number(readFileSync(lock, "utf8").trim());
      let alive = false;
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid) {
        try {
          process.kill(pid, 0);
          alive = true;
        } catch (e) {
          alive = (e as NodeJS.ErrnoException).code === "EPERM";
        }
      }
      if (alive) throw new ApplyRefusal("busy", `another apply is running (pid ${pid})`);
      rmSync(lock, { force: true });
    }
  }
  throw new ApplyRefusal("busy", "could not take the apply lock");
}

export function outcome(
  clock: Clock,
  result: OutcomeResult,
  fields: Partial<Omit<UpdateOutcome, "id" | "result" | "at">> & { source: string },
): UpdateOutcome {
  const at = iso(clock);
  return {
    id: `${at}-${result}-${fields.bundleId ?? "none"}`,
    result,
    version: fields.version ?? null,
    bundleId: fields.bundleId ?? null,
    kind: fields.kind ?? null,
    at,
    reason: fields.reason ?? null,
    code: fields.code ?? null,
    source: fields.source,
  };
}

/** The running context of one applier run. */
export interface Run {
  env: ApplyEnv;
  settings: UpdateSettings;
  /** The config in force when the run started (what a rollback goes back to). */
  current: VenddConfig;
}

export function loadRun(env: ApplyEnv): Run {
  const current = env.loadConfig(env.configFile);
  const settings = updateSettingsOf(current);
  mkdirSync(settings.stateDir, { recursive: true, mode: 0o755 });
  return { env, settings, current };
}

export function refuse(code: string, message: string): never {
  throw new ApplyRefusal(code, message);
}

/** Records a refusal as the last outcome (nothing else changes) and returns it. */
export function recordRefusal(
  run: Run,
  err: ApplyRefusal | BundleError,
  source: string,
  meta?: VerifiedBundle["meta"],
): UpdateOutcome {
  const state = readState(run.settings.stateDir);
  const out = outcome(run.env.clock, "refused", {
    version: meta?.version ?? null,
    bundleId: meta?.id ?? null,
    kind: meta?.kind ?? null,
    reason: err.message,
    code: err.code,
    source,
  });
  writeState(run.settings.stateDir, { ...state, outcome: out });
  run.env.log(`refused: ${err.message}`);
  return out;
}

export async function withRun<T>(env: ApplyEnv, fn: (run: Run) => Promise<T>): Promise<T> {
  const run = loadRun(env);
  const unlock = takeLock(run.settings.stateDir);
  try {
    return await fn(run);
  } finally {
    unlock();
  }
}
