/**
 * A rollout's rules (issue 41), without the database: how units are split into phases, how a unit's step
 * moves its state (forward only), what each state is called, and when a phase halts or ends the rollout.
 */
import type { BundleStep } from "../../core/fleetWire.js";
import type { RolloutsTable } from "../db/schema.js";

export type UnitRolloutState = RolloutsTable["state"];

/** A phase's size: a number of units, or a share (percent) of the rollout's units. */
export type PhaseSize = { count: number } | { percent: number };

/** Parses `3` or `25%` (what `--canary` and `--wave` take); null when it is neither. */
export function parsePhaseSize(text: string): PhaseSize | null {
  const pct = /^(\d{1,3})%$/.exec(text);
  if (pct !== null) {
    const n = Number(pct[1]);
    return n >= 1 && n <= 100 ? { percent: n } : null;
  }
  if (/^\d{1,6}$/.test(text)) {
    const n = Number(text);
    return n >= 1 ? { count: n } : null;
  }
  return null;
}

function unitsOf(size: PhaseSize, total: number): number {
  const n = "count" in size ? size.count : Math.ceil((size.percent * total) / 100);
  return Math.max(1, Math.min(total, n));
}

/**
 * The phase of each unit, in the order given (sorted by the caller): the canary first, then waves of the
 * wave size until every unit has one. Returns the phases' count too.
 */
export function assignPhases(
  unitIds: readonly string[],
  canary: PhaseSize,
  wave: PhaseSize,
): { phaseOf: Map<string, number>; phases: number } {
  const phaseOf = new Map<string, number>();
  const total = unitIds.length;
  if (total === 0) return { phaseOf, phases: 0 };
  const first = unitsOf(canary, total);
  const per = unitsOf(wave, total);
  let phase = 0;
  let inPhase = 0;
  let limit = first;
  for (const id of unitIds) {
    if (inPhase === limit) {
      phase += 1;
      inPhase = 0;
      limit = per;
    }
    phaseOf.set(id, phase);
    inPhase += 1;
  }
  return { phaseOf, phases: phase + 1 };
}

/** Each unit state's rank: a step moves a unit only to a higher one; 6 and 7 are final. */
const RANK: Record<UnitRolloutState, number> = {
  waiting: 0,
  offered: 1,
  pending: 2,
  verified: 3,
  swapped: 4,
  healthy: 5,
  applied: 6,
  refused: 7,
  rolledBack: 7,
};

/** The unit state a step puts a unit in (db/schema.ts keeps the names of before: pending, applied). */
export function stateOfStep(step: BundleStep): UnitRolloutState {
  switch (step) {
    case "fetched":
      return "pending";
    case "applied":
      return "swapped";
    case "committed":
      return "applied";
    default:
      return step;
  }
}

/** Whether a unit in `from` moves to `to` (forward only; a final state stays). */
export function movesForward(from: UnitRolloutState, to: UnitRolloutState): boolean {
  return RANK[from] < 6 && RANK[to] > RANK[from];
}

export const isFailed = (s: UnitRolloutState): boolean => s === "refused" || s === "rolledBack";
export const isFinal = (s: UnitRolloutState): boolean => RANK[s] >= 6;

/** What the CLI and the page call each state: the step names the unit reports. */
export function shownState(s: UnitRolloutState): string {
  switch (s) {
    case "pending":
      return "fetched";
    case "swapped":
      return "applied";
    case "applied":
      return "committed";
    default:
      return s;
  }
}

/** The states in the order the page and the CLI count them. */
export const SHOWN_STATES = [
  "waiting",
  "offered",
  "fetched",
  "verified",
  "applied",
  "healthy",
  "committed",
  "refused",
  "rolledBack",
] as const;

/**
 * What a running rollout does after a change in its current phase: halt when the failed share is over the
 * threshold, release the next phase when every unit of this one is final, end when it was the last.
 */
export function nextMove(
  phaseStates: readonly UnitRolloutState[],
  maxFailurePct: number,
  isLastPhase: boolean,
): { kind: "halt"; reason: string } | { kind: "advance" } | { kind: "done" } | { kind: "wait" } {
  const total = phaseStates.length;
  const failed = phaseStates.filter(isFailed).length;
  if (total > 0 && failed * 100 > maxFailurePct * total)
    return {
      kind: "halt",
      reason: `${failed} of ${total} units of the phase failed (more than ${maxFailurePct}%)`,
    };
  if (phaseStates.every(isFinal)) return isLastPhase ? { kind: "done" } : { kind: "advance" };
  return { kind: "wait" };
}
