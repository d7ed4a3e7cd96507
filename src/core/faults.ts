/**
 * Named fault points: labelled steps of the money path where a crash test can kill the daemon. Inert unless
 * armed (a seam, not a test-mode branch): production passes `NO_FAULTS`, or `faultPointsFromEnv`, which is
 * armed only when `VENDD_FAULT_POINT` is set.
 */
export const FAULT_POINTS = [
  "session.opened",
  "start.recorded",
  "start.sent",
  "start.completed",
  "start.answered",
  "approve.recorded",
  "approve.sent",
  "vend.recorded",
  "settle.recorded",
  "settle.sent",
  "settle.completed",
  "settle.answered",
  "session.closed",
] as const;

export type FaultPointName = (typeof FAULT_POINTS)[number];

/**
 * The steps of applying a bundle (src/update/apply.ts) where a crash test kills the applier: after the new
 * config (and release) are staged, after the swap, inside the health gate, and inside a rollback (the last
 * known good restored, the daemon not yet restarted). A list of their own, so the
 * money-path crash tests that walk `FAULT_POINTS` are not asked to reach them.
 */
export const UPDATE_FAULT_POINTS = [
  "update.staged",
  "update.swapped",
  "update.health",
  "update.rollback",
] as const;

export type UpdateFaultPointName = (typeof UPDATE_FAULT_POINTS)[number];

/**

 * The steps of the fleet sender (src/daemon/fleetLink.ts) where a crash test kills the unit: before a batch
 * is posted, after the fleet answered but before the events are marked delivered, and after the mark.
 */
export const FLEET_FAULT_POINTS = ["fleet.beforePost", "fleet.beforeMark", "fleet.afterMark"] as const;

export type FleetFaultPointName = (typeof FLEET_FAULT_POINTS)[number];

/** Fault points of the fleet sender: called when it passes the named step. */
export interface FleetFaultPoints {
  hit(name: FleetFaultPointName): void;
}

/** `faultPointsFromEnv` for the fleet sender's points (`FLEET_FAULT_POINTS`). */
export function fleetFaultPointsFromEnv(
  env: NodeJS.ProcessEnv,
  kill: () => void = sigkillSelf,
): FleetFaultPoints {
  return armedPoints(FLEET_FAULT_POINTS, env, kill);
}

/**
 * The fleet server's points (`vendd fleet serve`): `fleet.ingest.stored` is inside a batch's ingest
 * transaction, after every insert and update and before the commit; a crash test kills the server there.
 */
export const FLEET_SERVER_FAULT_POINTS = ["fleet.ingest.stored"] as const;

export type FleetServerFaultPointName = (typeof FLEET_SERVER_FAULT_POINTS)[number];

/** Fault points of the fleet server: called when it passes the named step. */
export interface FleetServerFaultPoints {
  hit(name: FleetServerFaultPointName): void;
  /** A point is armed: the fleet takes the steps the point names (ingest.ts has a path without them). */
  readonly armed?: boolean;
}

export const NO_FLEET_SERVER_FAULTS: FleetServerFaultPoints = { hit() {}, armed: false };

/** `faultPointsFromEnv` for the fleet server's points (`FLEET_SERVER_FAULT_POINTS`). */
export function fleetServerFaultPointsFromEnv(
  env: NodeJS.ProcessEnv,
  kill: () => void = sigkillSelf,
): FleetServerFaultPoints {
  const points = armedPoints(FLEET_SERVER_FAULT_POINTS, env, kill);
  return {
    hit: (name) => points.hit(name),
    armed: env.VENDD_FAULT_POINT !== undefined && env.VENDD_FAULT_POINT !== "",
  };
}

/** Fault points of the applier: called when it passes the named step. */
export interface UpdateFaultPoints {
  hit(name: UpdateFaultPointName): void;
}

export interface FaultPoints {
  /** Called when the money path passes the named step. */
  hit(name: FaultPointName): void;
}

export const NO_FAULTS: FaultPoints = { hit() {} };

export class FaultPointError extends Error {
  override readonly name = "FaultPointError";
}

/**
 * `VENDD_FAULT_POINT=name` kills the process with SIGKILL at the first hit of `name`; `name@N` at the Nth.
 * An unknown name is an error (a crash test that arms nothing would prove nothing).
 */
export function faultPointsFromEnv(env: NodeJS.ProcessEnv, kill: () => void = sigkillSelf): FaultPoints {
  if (env.VENDD_FAULT_POINT === undefined || env.VENDD_FAULT_POINT === "") return NO_FAULTS;
  return armedPoints(FAULT_POINTS, env, kill);
}

/** `faultPointsFromEnv` for the applier's points (`UPDATE_FAULT_POINTS`). */
export function updateFaultPointsFromEnv(
  env: NodeJS.ProcessEnv,
  kill: () => void = sigkillSelf,
): UpdateFaultPoints {
  return armedPoints(UPDATE_FAULT_POINTS, env, kill);
}

function armedPoints<T extends string>(
  points: readonly T[],
  env: NodeJS.ProcessEnv,
  kill: () => void,
): { hit(name: T): void } {
  const spec = env.VENDD_FAULT_POINT;
  if (spec === undefined || spec === "") return { hit() {} };
  const [name, nth] = spec.split("@");
  const point = points.find((p) => p === name);
  if (point === undefined) {
    throw new FaultPointError(
      `VENDD_FAULT_POINT: unknown point ${JSON.stringify(name)}; valid: ${points.join(", ")}`,
    );
  }
  const at = nth === undefined ? 1 : Number(nth);
  if (!Number.isSafeInteger(at) || at < 1)
    throw new FaultPointError(`VENDD_FAULT_POINT: bad hit number in ${spec}`);
  let hits = 0;
  return {
    hit(n) {
      if (n === point && ++hits === at) kill();
    },
  };
}

function sigkillSelf(): void {
  process.kill(process.pid, "SIGKILL");
}
