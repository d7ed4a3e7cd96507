/**
 * The applier's persistent state, one small JSON file in `updates.stateDir` replaced with
 * `writeFileAtomic`: the high-water mark, the versions rolled back, the apply in progress (so a killed
 * apply is finished or rolled back by the next run) and the last outcome (which the daemon reads at start
 * and shows in its status: `readUpdateOutcome`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomicFile.js";

export const STATE_FILE = "state.json";
/** The config in force before the swap: what a rollback restores. */
export const LAST_GOOD_FILE = "last-good.yaml";
/** How many rolled-back versions are remembered (and refused again). */
const ROLLED_BACK_KEPT = 32;

export type ApplyPhase = "staged" | "swapping" | "swapped" | "rolling_back";

/** An apply that has started and not yet been committed or rolled back. */
export interface PendingApply {
  version: number;
  bundleId: string;
  kind: "config" | "release";
  /**
   * `staged`: nothing in force changed; `swapping`: the swap may be half done; `swapped`: all new in force;
   * `rolling_back`: the last known good is being restored (a restart finishes that first).
   */
  phase: ApplyPhase;
  /** Why it is being rolled back (phase `rolling_back`), else null. */
  reason: string | null;
  /** The rollback's code (`unhealthy`, `interrupted`), kept so a resumed rollback reports the same. */
  reasonCode?: string;
  /** A locally authorised config change (the console): it does not move the high-water mark. */
  local: boolean;
  /** A flag for the commit's outcome (`untrusted_time`: the expiry could not be checked), else null. */
  note: string | null;
  /** SHA-256 of the signed bundle's bytes (issue 41: how its steps name it to the fleet); absent for local. */
  sha256?: string;
  startedAt: string;
  /** Name under `releases/` of the release being installed, or null for a config bundle. */
  release: string | null;
  /** What `current` pointed at before (relative link text), or null when there was no `current`. */
  previousRelease: string | null;
  source: string;
}

export type OutcomeResult = "committed" | "rolled_back" | "refused";

/** The last thing the applier decided, for the journal and the console's `status`. */
export interface UpdateOutcome {
  /** Unique per outcome: the daemon journals each id once. */
  id: string;
  result: OutcomeResult;
  /** The bundle's version, or null when the bundle could not be read. */
  version: number | null;
  bundleId: string | null;
  kind: "config" | "release" | null;
  at: string;
  /** Why it was rolled back or refused; null when committed. */
  reason: string | null;
  /** A specific code: `bad_signature`, `older`, `equal`, `expired`, `wrong_target`, `unhealthy`, ... */
  code: string | null;
  /** Where the bundle came from: a file path, `inbox`, `pull`. */
  source: string;
}

export interface UpdateState {
  v: 1;
  /** The highest version committed; a bundle must be above it. 0 = none yet. */
  highWater: number;
  rolledBack: number[];
  pending: PendingApply | null;
  outcome: UpdateOutcome | null;
}

export const EMPTY_STATE: UpdateState = { v: 1, highWater: 0, rolledBack: [], pending: null, outcome: null };

export class UpdateStateError extends Error {
  override readonly name = "UpdateStateError";
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const str = (v: unknown): v is string => typeof v === "string";
const strOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";
const kindOrNull = (v: unknown): v is "config" | "release" | null =>
  v === null || v === "config" || v === "release";

function parsePending(v: unknown): PendingApply | null {
  if (v === null) return null;
  if (
    !isObj(v) ||
    typeof v.version !== "number" ||
    !str(v.bundleId) ||
    (v.kind !== "config" && v.kind !== "release") ||
    (v.phase !== "staged" && v.phase !== "swapping" && v.phase !== "swapped" && v.phase !== "rolling_back") ||
    !str(v.startedAt) ||
    !strOrNull(v.release) ||
    !strOrNull(v.previousRelease) ||
    !str(v.source) ||
    !strOrNull(v.reason) ||
    typeof v.local !== "boolean"
  ) {
    throw new UpdateStateError("the pending apply in the state file is malformed");
  }
  return {
    version: v.version,
    bundleId: v.bundleId,
    kind: v.kind,
    phase: v.phase,
    startedAt: v.startedAt,
    release: v.release,
    previousRelease: v.previousRelease,
    source: v.source,
    reason: v.reason,
    local: v.local,
    note: typeof v.note === "string" ? v.note : null,
    ...(typeof v.reasonCode === "string" ? { reasonCode: v.reasonCode } : {}),
    ...(typeof v.sha256 === "string" ? { sha256: v.sha256 } : {}),
  };
}

function parseOutcome(v: unknown): UpdateOutcome | null {
  if (v === null) return null;
  if (
    !isObj(v) ||
    !str(v.id) ||
    (v.result !== "committed" && v.result !== "rolled_back" && v.result !== "refused") ||
    !(v.version === null || typeof v.version === "number") ||
    !strOrNull(v.bundleId) ||
    !kindOrNull(v.kind) ||
    !str(v.at) ||
    !strOrNull(v.reason) ||
    !strOrNull(v.code) ||
    !str(v.source)
  ) {
    throw new UpdateStateError("the outcome in the state file is malformed");
  }
  return {
    id: v.id,
    result: v.result,
    version: v.version,
    bundleId: v.bundleId,
    kind: v.kind,
    at: v.at,
    reason: v.reason,
    code: v.code,
    source: v.source,
  };
}

/** Reads the state; a missing file is the empty state, a malformed one an `UpdateStateError`. */
export function readState(stateDir: string): UpdateState {
  let text: string;
  try {
    text = readFileSync(join(stateDir, STATE_FILE), "utf8");
  } catch (err) {
    if (isObj(err) && err.code === "ENOENT") return EMPTY_STATE;
    throw new UpdateStateError(`cannot read the update state: ${isObj(err) ? String(err.code) : "error"}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UpdateStateError("the update state file is not JSON");
  }
  if (
    !isObj(raw) ||
    raw.v !== 1 ||
    typeof raw.highWater !== "number" ||
    !Number.isSafeInteger(raw.highWater) ||
    !Array.isArray(raw.rolledBack) ||
    !raw.rolledBack.every((n): n is number => typeof n === "number")
  ) {
    throw new UpdateStateError("the update state file is malformed");
  }
  return {
    v: 1,
    highWater: raw.highWater,
    rolledBack: raw.rolledBack,
    pending: parsePending(raw.pending),
    outcome: parseOutcome(raw.outcome),
  };
}

/** Replaces the state file atomically and durably (temp, fsync, rename, fsync dir). */
export function writeState(stateDir: string, state: UpdateState): void {
  const kept = { ...state, rolledBack: state.rolledBack.slice(-ROLLED_BACK_KEPT) };
  writeFileAtomic(join(stateDir, STATE_FILE), `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o644 });
}

/** What the daemon shows: the last outcome, an apply in progress, the high-water mark. */
export interface UpdateStatus {
  highWater: number;
  pending: { version: number; phase: ApplyPhase; startedAt: string } | null;
  outcome: UpdateOutcome | null;
  /** Set when the state file could not be read; the rest is then empty. */
  problem: string | null;
}

/**
 * The hook for the daemon: call it at start (journal the outcome once per `outcome.id`) and from the
 * control socket's `status`. Never throws: a broken or unreadable state file becomes `problem`.
 */
export function readUpdateOutcome(stateDir: string): UpdateStatus {
  try {
    const s = readState(stateDir);
    return {
      highWater: s.highWater,
      pending:
        s.pending === null
          ? null
          : { version: s.pending.version, phase: s.pending.phase, startedAt: s.pending.startedAt },
      outcome: s.outcome,
      problem: null,
    };
  } catch (err) {
    return {
      highWater: 0,
      pending: null,
      outcome: null,
      problem: err instanceof Error ? err.message : "unreadable update state",
    };
  }
}
