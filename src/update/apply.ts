/**
 * Applying a bundle (reliability.md §4.2): verify → target, expiry, high-water mark → validate the config
 * with the schema → stage → atomic swap → restart → health gate → commit (raise the mark) or roll back to
 * the last known good and report why.
 *
 * Every step that changes what is in force is preceded by a state-file write naming the phase, so a run
 * killed anywhere leaves either the whole old or the whole new config (and release) in force, and the next
 * run (`recoverInterrupted`, called first by every apply) finishes or rolls back the interrupted one:
 *
 * | phase at the kill | in force                  | the next run                                   |
 * |-------------------|---------------------------|------------------------------------------------|
 * | none / `staged`   | old                       | discards the staged files                      |
 * | `swapping`        | old or new (each whole)   | restores the last known good, restarts         |
 * | `swapped`         | new                       | restarts, health gate, commits or rolls back   |
 * | `rolling_back`    | new or old (each whole)   | restores the last known good, restarts         |
 *
 * The config is swapped with one `rename` of a fully written, fsynced staged file over the config file,
 * the release with one `rename` of a symlink; the directory is fsynced after each.
 */
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { VenddConfig } from "../config/load.js";
import { fsyncDirectory, writeFileAtomic } from "../core/atomicFile.js";
import type { Clock } from "../core/clock.js";
import type { UpdateFaultPoints } from "../core/faults.js";
import { BundleError, MAX_BUNDLE_BYTES, type VerifiedBundle, verifyBundle } from "./bundle.js";
import { type GateOptions, type HealthProbe, healthGate } from "./health.js";
import { type PublicKey, parsePublicKey } from "./minisign.js";
import { currentRelease, installRelease, pruneReleases, switchCurrent } from "./release.js";
import {
  LAST_GOOD_FILE,
  type OutcomeResult,
  type PendingApply,
  readState,
  type UpdateOutcome,
  type UpdateState,
  writeState,
} from "./state.js";

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
}

function iso(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

function stagedPath(configFile: string): string {
  return join(dirname(configFile), `.${basename(configFile)}.staged`);
}

/** Writes `data` to `path` like the file at `like` (mode, owner): the daemon must still read the config. */
function writeLike(path: string, data: Buffer | string, like: string): void {
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

function outcome(
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
interface Run {
  env: ApplyEnv;
  settings: UpdateSettings;
  /** The config in force when the run started (what a rollback goes back to). */
  current: VenddConfig;
}

function loadRun(env: ApplyEnv): Run {
  const current = env.loadConfig(env.configFile);
  const settings = updateSettingsOf(current);
  mkdirSync(settings.stateDir, { recursive: true, mode: 0o755 });
  return { env, settings, current };
}

/**
 * Restores the last known good config (and release) of `pending`, restarts, records the rollback. Safe to
 * repeat: a run killed inside it starts it again.
 */
async function rollBack(
  run: Run,
  state: UpdateState,
  pending: PendingApply,
  reason: string,
  code: string,
): Promise<UpdateOutcome> {
  const { env, settings } = run;
  const rolling: PendingApply = { ...pending, phase: "rolling_back", reason };
  writeState(settings.stateDir, { ...state, pending: rolling });
  env.log(`rolling back version ${pending.version}: ${reason}`);
  const lastGood = readFileSync(join(settings.stateDir, LAST_GOOD_FILE));
  writeLike(env.configFile, lastGood, env.configFile);
  if (pending.kind === "release") switchCurrent(settings.releaseRoot, pending.previousRelease);
  rmSync(stagedPath(env.configFile), { force: true });
  let restartNote = "";
  try {
    await env.restart();
  } catch (err) {
    restartNote = `; restarting with the last known good failed: ${err instanceof Error ? err.message : "error"}`;
  }
  const out = outcome(env.clock, "rolled_back", {
    version: pending.version,
    bundleId: pending.bundleId,
    kind: pending.kind,
    reason: `${reason}${restartNote}`,
    code,
    source: pending.source,
  });
  const rolledBack =
    code === "interrupted" || pending.local ? state.rolledBack : [...state.rolledBack, pending.version];
  writeState(settings.stateDir, { ...state, rolledBack, pending: null, outcome: out });
  return out;
}

/** Restart, health gate, then commit or roll back (phase `swapped`). */
async function finish(
  run: Run,
  state: UpdateState,
  pending: PendingApply,
  inForce: VenddConfig,
): Promise<UpdateOutcome> {
  const { env, settings } = run;
  env.log(`restarting the daemon with version ${pending.version}`);
  try {
    await env.restart();
  } catch (err) {
    return rollBack(run, state, pending, err instanceof Error ? err.message : "restart failed", "unhealthy");
  }
  const gate = await healthGate(env.probeFor(inForce), settings.health, env.clock, env.faults);
  if (!gate.healthy) return rollBack(run, state, pending, gate.reason, "unhealthy");
  const out = outcome(env.clock, "committed", {
    version: pending.version,
    bundleId: pending.bundleId,
    kind: pending.kind,
    source: pending.source,
  });
  const highWater = pending.local ? state.highWater : Math.max(state.highWater, pending.version);
  writeState(settings.stateDir, { ...state, highWater, pending: null, outcome: out });
  env.log(`committed version ${pending.version}`);
  if (pending.kind === "release" && pending.release !== null) {
    pruneReleases(
      settings.releaseRoot,
      new Set([pending.release, ...(pending.previousRelease === null ? [] : [pending.previousRelease])]),
    );
  }
  return out;
}

/**
 * Finishes or rolls back an apply a previous run left (killed, power loss). Returns its outcome, or null
 * when there was none. Every apply calls it first; `vendd bundle apply --recover` runs it alone.
 */
async function recover(run: Run): Promise<UpdateOutcome | null> {
  const { env, settings } = run;
  const state = readState(settings.stateDir);
  const pending = state.pending;
  if (pending === null) return null;
  env.log(`found an interrupted apply of version ${pending.version} (phase ${pending.phase})`);
  switch (pending.phase) {
    case "staged": {
      rmSync(stagedPath(env.configFile), { force: true });
      const out = outcome(env.clock, "rolled_back", {
        version: pending.version,
        bundleId: pending.bundleId,
        kind: pending.kind,
        reason: "the apply was interrupted before the swap; nothing had changed",
        code: "interrupted",
        source: pending.source,
      });
      writeState(settings.stateDir, { ...state, pending: null, outcome: out });
      return out;
    }
    case "swapping":
      return rollBack(run, state, pending, "the apply was interrupted during the swap", "interrupted");
    case "rolling_back":
      return rollBack(run, state, pending, pending.reason ?? "the rollback was interrupted", "unhealthy");
    case "swapped":
      // The config in force is the new one (the run loaded it): finish the gate with it.
      return finish(run, state, pending, run.current);
  }
}

function refuse(code: string, message: string): never {
  throw new ApplyRefusal(code, message);
}

/** Target, expiry, high-water mark and earlier rollbacks: refusals before anything is touched. */
function checkPolicy(
  bundle: VerifiedBundle,
  settings: UpdateSettings,
  state: UpdateState,
  now: number,
): void {
  const { meta } = bundle;
  const mine = [settings.unitId, ...(settings.fleet === null ? [] : [settings.fleet])];
  if (!meta.targets.some((t) => mine.includes(t))) {
    refuse("wrong_target", `the bundle is for ${meta.targets.join(", ")}, not for ${mine.join(" or ")}`);
  }
  if (Date.parse(meta.expires) <= now) refuse("expired", `the bundle expired at ${meta.expires}`);
  if (meta.version < state.highWater) {
    refuse("older", `version ${meta.version} is older than the version in force (${state.highWater})`);
  }
  if (meta.version === state.highWater) refuse("equal", `version ${meta.version} is already in force`);
  if (state.rolledBack.includes(meta.version)) {
    refuse("rolled_back_before", `version ${meta.version} was rolled back before; a fix needs a new version`);
  }
}

/** Reads a bundle file within the size limit. */
function readBundleFile(file: string): Buffer {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    refuse("unreadable", `cannot read ${basename(file)}: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
  }
  if (size > MAX_BUNDLE_BYTES) refuse("not_a_bundle", "the bundle is larger than 512 MiB");
  return readFileSync(file);
}

interface Candidate {
  version: number;
  bundleId: string;
  kind: "config" | "release";
  configText: string;
  release: Buffer | null;
  local: boolean;
  source: string;
}

/** Validates, stages, swaps and finishes one candidate (the caller checked signature and policy). */
async function stageAndSwap(run: Run, state: UpdateState, c: Candidate): Promise<UpdateOutcome> {
  const { env, settings } = run;
  const staged = stagedPath(env.configFile);
  writeLike(staged, c.configText, env.configFile);
  let next: VenddConfig;
  try {
    next = env.loadConfig(staged);
  } catch (err) {
    rmSync(staged, { force: true });
    refuse(
      "invalid_config",
      `the bundle's config is invalid: ${err instanceof Error ? err.message : "error"}`,
    );
  }
  const reason = updatesGuard(run.current, next, c.local);
  if (reason !== null) {
    rmSync(staged, { force: true });
    refuse(reason.code, reason.message);
  }
  // The last known good is the config in force now (committed, or the installed one).
  writeLike(join(settings.stateDir, LAST_GOOD_FILE), readFileSync(env.configFile), env.configFile);
  const previousRelease = currentRelease(settings.releaseRoot);
  let release: string | null = null;
  if (c.release !== null) {
    env.log(`installing release ${c.version}`);
    try {
      release = installRelease(settings.releaseRoot, String(c.version), c.release);
    } catch (err) {
      rmSync(staged, { force: true });
      refuse(
        "bad_release",
        `the release could not be installed: ${err instanceof Error ? err.message : "error"}`,
      );
    }
  }
  const pending: PendingApply = {
    version: c.version,
    bundleId: c.bundleId,
    kind: c.kind,
    phase: "staged",
    startedAt: iso(env.clock),
    release,
    previousRelease,
    source: c.source,
    reason: null,
    local: c.local,
  };
  writeState(settings.stateDir, { ...state, pending });
  env.faults.hit("update.staged");

  writeState(settings.stateDir, { ...state, pending: { ...pending, phase: "swapping" } });
  if (release !== null) switchCurrent(settings.releaseRoot, release);
  renameSync(staged, env.configFile);
  fsyncDirectory(dirname(env.configFile));
  const swapped: PendingApply = { ...pending, phase: "swapped" };
  writeState(settings.stateDir, { ...state, pending: swapped });
  env.log(`version ${c.version} swapped in`);
  env.faults.hit("update.swapped");
  return finish(run, state, swapped, next);
}

/**
 * What a new config may not change about updates: the state and release locations (the applier would lose
 * its state), and it must keep at least one key (or the unit could never be updated again). A local change
 * (the console) may not touch the `updates` section at all: only a signed bundle changes who is trusted.
 */
function updatesGuard(
  current: VenddConfig,
  next: VenddConfig,
  local: boolean,
): { code: string; message: string } | null {
  const a = current.updates;
  const b = next.updates;
  if (local && JSON.stringify(a) !== JSON.stringify(b)) {
    return { code: "updates_changed", message: "a local config change may not change the updates section" };
  }
  if (a.stateDir !== b.stateDir || a.releaseRoot !== b.releaseRoot) {
    return {
      code: "updates_moved",
      message: "a bundle may not move updates.stateDir or updates.releaseRoot",
    };
  }
  if (a.publicKeys.length > 0 && b.publicKeys.length === 0) {
    return {
      code: "lockout",
      message: "the new config lists no updates.publicKeys: the unit could never be updated again",
    };
  }
  return null;
}

/** Records a refusal as the last outcome (nothing else changes) and returns it. */
function recordRefusal(
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

async function withRun<T>(env: ApplyEnv, fn: (run: Run) => Promise<T>): Promise<T> {
  const run = loadRun(env);
  const unlock = takeLock(run.settings.stateDir);
  try {
    return await fn(run);
  } finally {
    unlock();
  }
}

/** One signed bundle through the whole pipeline, after any interrupted apply is finished. */
async function applyOne(run: Run, data: Buffer, source: string): Promise<UpdateOutcome> {
  let verified: VerifiedBundle | undefined;
  try {
    verified = verifyBundle(data, { keys: run.settings.keys, releaseThreshold: run.settings.threshold });
    const state = readState(run.settings.stateDir);
    checkPolicy(verified, run.settings, state, run.env.clock.now());
    run.env.log(
      `verified version ${verified.meta.version} (${verified.meta.kind}) signed by ${verified.signers.join(", ")}`,
    );
    return await stageAndSwap(run, state, {
      version: verified.meta.version,
      bundleId: verified.meta.id,
      kind: verified.meta.kind,
      configText: verified.configText,
      release: verified.release,
      local: false,
      source,
    });
  } catch (err) {
    if (err instanceof ApplyRefusal || err instanceof BundleError)
      return recordRefusal(run, err, source, verified?.meta);
    throw err;
  }
}

export interface ApplyReport {
  /** The outcome of an interrupted apply this run finished or rolled back, if any. */
  recovered: UpdateOutcome | null;
  outcomes: UpdateOutcome[];
}

/** `vendd bundle apply FILE`. */
export async function applyBundleFile(file: string, env: ApplyEnv, source = file): Promise<ApplyReport> {
  return withRun(env, async (run) => {
    const recovered = await recover(run);
    const fresh = recovered === null ? run : loadRun(env);
    let data: Buffer;
    try {
      data = readBundleFile(file);
    } catch (err) {
      if (err instanceof ApplyRefusal) return { recovered, outcomes: [recordRefusal(fresh, err, source)] };
      throw err;
    }
    return { recovered, outcomes: [await applyOne(fresh, data, source)] };
  });
}

/** `vendd bundle apply --recover`: only finish or roll back an interrupted apply. */
export async function recoverInterrupted(env: ApplyEnv): Promise<UpdateOutcome | null> {
  return withRun(env, (run) => recover(run));
}

/** Subdirectory of the inbox where the console drops locally authorised configs. */
export const LOCAL_INBOX = "local";

/**
 * `vendd bundle apply --inbox DIR`: every bundle file in DIR (names not starting with a dot, in name
 * order), then every `DIR/local/*.yaml` (a locally authorised config from the console). Each file is
 * removed once decided (committed, rolled back or refused), so the path unit does not fire for it again.
 */
export async function applyInbox(dir: string, env: ApplyEnv): Promise<ApplyReport> {
  return withRun(env, async (run) => {
    const recovered = await recover(run);
    const outcomes: UpdateOutcome[] = [];
    const files = (d: string) =>
      existsSync(d)
        ? readdirSync(d, { withFileTypes: true })
            .filter((e) => e.isFile() && !e.name.startsWith("."))
            .map((e) => e.name)
            .sort()
        : [];
    for (const name of files(dir)) {
      const path = join(dir, name);
      const fresh = loadRun(env);
      let data: Buffer | null = null;
      try {
        data = readBundleFile(path);
      } catch (err) {
        if (!(err instanceof ApplyRefusal)) throw err;
        outcomes.push(recordRefusal(fresh, err, `inbox:${name}`));
      }
      if (data !== null) outcomes.push(await applyOne(fresh, data, `inbox:${name}`));
      unlinkSync(path);
    }
    const localDir = join(dir, LOCAL_INBOX);
    for (const name of files(localDir).filter((n) => n.endsWith(".yaml") || n.endsWith(".json"))) {
      const path = join(localDir, name);
      outcomes.push(await applyLocalText(loadRun(env), readFileSync(path, "utf8"), `console:${name}`));
      unlinkSync(path);
    }
    return { recovered, outcomes };
  });
}

async function applyLocalText(run: Run, text: string, source: string): Promise<UpdateOutcome> {
  const state = readState(run.settings.stateDir);
  try {
    return await stageAndSwap(run, state, {
      version: state.highWater,
      bundleId: `local-${run.env.clock.now().toString(16)}`,
      kind: "config",
      configText: text,
      release: null,
      local: true,
      source,
    });
  } catch (err) {
    if (err instanceof ApplyRefusal) return recordRefusal(run, err, source);
    throw err;
  }
}

/**
 * A locally authorised config change (the technician console, issue 13) through the same stage, swap,
 * health gate and rollback, without a signature: it may not change the `updates` section and does not
 * move the high-water mark. Must run with the rights to write the config file (the root applier); the
 * console, which runs without them, drops the file into `<inbox>/local/` instead.
 */
export async function applyLocalConfig(
  text: string,
  env: ApplyEnv,
  source = "console",
): Promise<ApplyReport> {
  return withRun(env, async (run) => {
    const recovered = await recover(run);
    return {
      recovered,
      outcomes: [await applyLocalText(recovered === null ? run : loadRun(env), text, source)],
    };
  });
}
