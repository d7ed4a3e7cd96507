import type { Minor } from "../../../src/core/money.js";
import type { VmcError, VmcEvent } from "../controller.js";
import type { DeviceMsg, HostCmd, InvalidLine } from "./messages.js";

/**
 * The cashless session's state as the driver tracks it, the inputs and the step the machine (machine.ts)
 * returns, with the helpers both the machine and its line handling (machineLines.ts) build steps with.
 */
export type Reader =
  /** Cashless function off (`C,0`), or not configured yet. */
  | { s: "offline" }
  /** On, waiting for the VMC's RESET/SETUP (MDB `Inactive`). */
  | { s: "inactive" }
  /** Set up by the VMC but not enabled (MDB `Disabled`). */
  | { s: "disabled" }
  | { s: "enabled" }
  /** `C,START` sent, waiting for `c,STATUS,IDLE`. */
  | { s: "starting"; funds: Minor }
  /** MDB `Session Idle`. */
  | { s: "idle" }
  /** A vend request is pending: the only state in which an approval may be sent. */
  | { s: "vend"; price: Minor; item: number }
  /** Approved with exactly `price`; waiting for the outcome. */
  | { s: "approved"; price: Minor; item: number }
  /** Denied; waiting for the VMC to leave the vend. */
  | { s: "denied" }
  /** `C,STOP` sent; waiting for `c,STATUS,ENABLED`. */
  | { s: "stopping" }
  /** The vend is over; the VMC reports `IDLE` (session goes on) or `ENABLED` (session over). */
  | { s: "ending" };

export interface MachineState {
  reader: Reader;
  /** The one command waiting for its confirmation line, if any. */
  pending: HostCmd | null;
}

export type MachineInput =
  | { kind: "line"; msg: DeviceMsg | InvalidLine }
  | { kind: "command"; cmd: HostCmd }
  /** The pending command's confirmation did not arrive within the command timeout. */
  | { kind: "timeout" }
  /** The port closed underneath us (unplug, adapter power loss). */
  | { kind: "linkLost" };

export interface LogEntry {
  level: "debug" | "info" | "warn";
  msg: string;
}

/** How the pending command ended. */
export type Settle = { ok: true } | { ok: false; code: VmcError["code"]; message: string };

export interface Step {
  state: MachineState;
  events: VmcEvent[];
  log: LogEntry[];
  /** A command to write now (the machine accepted it and made it pending). */
  send: HostCmd | null;
  /** Settles the pending command (or, for a refused command, the command just given). */
  settle: Settle | null;
  /** The adapter lost its configuration: run the configuration sequence again (vending-mdb §2.5). */
  reconfigure: boolean;
}

export const initialState: MachineState = { reader: { s: "offline" }, pending: null };

/** Reader states that belong to a session (a reset there leaves something unknown). */
export const SESSION_STATES: ReadonlySet<Reader["s"]> = new Set([
  "starting",
  "idle",
  "vend",
  "approved",
  "denied",
  "stopping",
  "ending",
]);

/** Builds a step from a partial result; `state` defaults to the input state. */
export function stepOf(state: MachineState, part: Partial<Step> = {}): Step {
  return { state, events: [], log: [], send: null, settle: null, reconfigure: false, ...part };
}

export function fail(code: VmcError["code"], message: string): Settle {
  return { ok: false, code, message };
}
