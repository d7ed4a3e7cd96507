/**
 * The phases of an apply that change what is in force (src/update/apply.ts): stage, swap, restart, health
 * gate, then commit or roll back to the last known good; and the recovery of an apply a killed run left,
 * by the phase its state file names.
 */
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseStructured } from "../config/files.js";
import { identityFileOf, valueAt } from "../config/identity.js";
import type { VenddConfig } from "../config/load.js";
import { fsyncDirectory } from "../core/atomicFile.js";
import { configGuard } from "./applyPolicy.js";
import { iso, outcome, type Run, refuse, reportStep, stagedPath, writeLike } from "./applyRun.js";
import { healthGate } from "./health.js";
import { currentRelease, installRelease, pruneReleases, switchCurrent } from "./release.js";
import {
  LAST_GOOD_FILE,
  type PendingApply,
  readState,
  type UpdateOutcome,
  type UpdateState,
  writeState,
} from "./state.js";

/** What an apply puts in force: a verified bundle's contents, or a locally authorised config. */
export interface Candidate {
  version: number;
  bundleId: string;
  kind: "config" | "release";
  configText: string;
  release: Buffer | null;
  local: boolean;
  source: string;
  note: string | null;
  /** SHA-256 of the signed bundle (issue 41), for its steps; absent for a local change. */
  sha256?: string;
}

/** Validates, stages, swaps and finishes one candidate (the caller checked signature and policy). */
export async function stageAndSwap(run: Run, state: UpdateState, c: Candidate): Promise<UpdateOutcome> {
  const { env, settings } = run;
  const staged = stagedPath(env.configFile);
  const parsed = parseStructured(c.configText, staged, { label: "(bundle config)" });
  const identityFile = identityFileOf(env.configFile);
  const hasIdentity = resolve(identityFile) !== resolve(env.configFile) && existsSync(identityFile);
  if (!c.local && !hasIdentity && parsed.ok && valueAt(parsed.value, "unit.id") === undefined)
    refuse(
      "no_identity_file",
      `the bundle carries no unit identity and this unit has no identity file ${identityFile}: split its config first (vendd config split ${env.configFile}; docs/operators.md)`,
    );
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
  const reason = configGuard(run.current, next, {
    local: c.local,
    raw: parsed.ok ? parsed.value : undefined,
    identityFile: hasIdentity ? identityFile : null,
  });
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
    note: c.note,
    ...(c.sha256 === undefined ? {} : { sha256: c.sha256 }),
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
  reportStep(env, c.sha256, "applied");
  env.faults.hit("update.swapped");
  return finish(run, state, swapped, next);
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
  const rolling: PendingApply = { ...pending, phase: "rolling_back", reason, reasonCode: code };
  writeState(settings.stateDir, { ...state, pending: rolling });
  env.log(`rolling back version ${pending.version}: ${reason}`);
  const lastGood = readFileSync(join(settings.stateDir, LAST_GOOD_FILE));
  writeLike(env.configFile, lastGood, env.configFile);
  if (pending.kind === "release") switchCurrent(settings.releaseRoot, pending.previousRelease);
  rmSync(stagedPath(env.configFile), { force: true });
  env.faults.hit("update.rollback");
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
  reportStep(env, pending.sha256, "rolledBack", out.reason ?? reason);
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
  const gate = await healthGate(env.probeFor(inForce), settings.health, env.clock, env.faults, (l) =>
    env.log(l),
  );
  if (!gate.healthy) return rollBack(run, state, pending, gate.reason, "unhealthy");
  reportStep(env, pending.sha256, "healthy");
  const out = outcome(env.clock, "committed", {
    version: pending.version,
    bundleId: pending.bundleId,
    kind: pending.kind,
    source: pending.source,
    ...(pending.note === null ? {} : { reason: pending.note, code: "untrusted_time" }),
  });
  const highWater = pending.local ? state.highWater : Math.max(state.highWater, pending.version);
  writeState(settings.stateDir, { ...state, highWater, pending: null, outcome: out });
  env.log(`committed version ${pending.version}`);
  reportStep(env, pending.sha256, "committed", pending.note ?? "");
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
export async function recover(run: Run): Promise<UpdateOutcome | null> {
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
      return rollBack(
        run,
        state,
        pending,
        pending.reason ?? "the rollback was interrupted",
        pending.reasonCode ?? "unhealthy",
      );
    case "swapped":
      // The config in force is the new one (the run loaded it): finish the gate with it.
      return finish(run, state, pending, run.current);
  }
}
