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
 *
 * This module holds the entry points (a bundle file, the inbox, a local config, recovery alone); the run
 * context is in applyRun.ts, the refusals before anything changes in applyPolicy.ts, and the phases that
 * change what is in force, with the recovery, in applySwap.ts.
 */

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { checkPolicy, readBundleFile } from "./applyPolicy.js";
import {
  type ApplyEnv,
  ApplyRefusal,
  loadRun,
  type Run,
  recordRefusal,
  reportStep,
  withRun,
} from "./applyRun.js";
import { recover, stageAndSwap } from "./applySwap.js";
import { BundleError, type VerifiedBundle, verifyBundle } from "./bundle.js";
import { readState, type UpdateOutcome } from "./state.js";

/** One signed bundle through the whole pipeline, after any interrupted apply is finished. */
async function applyOne(run: Run, data: Buffer, source: string): Promise<UpdateOutcome> {
  let verified: VerifiedBundle | undefined;
  const sha256 = createHash("sha256").update(data).digest("hex");
  try {
    verified = verifyBundle(data, { keys: run.settings.keys, releaseThreshold: run.settings.threshold });
    const state = readState(run.settings.stateDir);
    const note = checkPolicy(verified, run.settings, state, run.env.clock.now());
    if (note !== null) run.env.log(note);
    run.env.log(
      `verified version ${verified.meta.version} (${verified.meta.kind}) signed by ${verified.signers.join(", ")}`,
    );
    reportStep(run.env, sha256, "verified");
    return await stageAndSwap(run, state, {
      version: verified.meta.version,
      bundleId: verified.meta.id,
      kind: verified.meta.kind,
      configText: verified.configText,
      release: verified.release,
      local: false,
      source,
      note,
      sha256,
    });
  } catch (err) {
    if (err instanceof ApplyRefusal || err instanceof BundleError) {
      const out = recordRefusal(run, err, source, verified?.meta);
      reportStep(run.env, sha256, "refused", `${err.code}: ${err.message}`);
      return out;
    }
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
      note: null,
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
