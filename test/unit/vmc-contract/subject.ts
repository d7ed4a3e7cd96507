import type { VendController, VmcEvent } from "../../../drivers/vmc/controller.js";
import type { Minor } from "../../../src/core/money.js";

/**
 * What one implementation of `VendController` gives the contract suite: the controller, and a driver of the
 * machine side with one small interface, so every case is written once (in the style of node-serialport's
 * binding contract tests: one suite, many subjects).
 */

/**
 * Things a subject's machine can express. A missing capability is a string: the reason, printed in the name
 * of every case it skips.
 */
export interface Capabilities {
  /** The customer chooses any item at any price; without it the machine has one fixed request. */
  selection: true | string;
  /** A selection-first vend runs in the VMC's implicit session, which ends with `sessionEnded` (MDB). */
  implicitSession: true | string;
  /** The VMC keeps a session open after a vend (multi-vend). */
  multiVend: true | string;
  /** The machine withdraws a request inside a session and the session goes on (MDB VEND CANCEL). */
  withdrawKeepsSession: true | string;
  /** The machine reports a dispense failure. */
  dispenseFailure: true | string;
  /** The VMC resets during an approved vend. */
  vmcReset: true | string;
  /** The machine reports an outcome for a vend that was never approved (a stray line on the wire). */
  strayOutcome: true | string;
  /** Display texts reach a display the test can read. */
  display: true | string;
  /** The machine can stop answering commands (command timeout). */
  silence: true | string;
  /** The link can be pulled and put back (unplug, replug). */
  unplug: true | string;
}

export type Capability = keyof Capabilities;

/** A full MDB cashless adapter (the mock binding, the PTY, a real adapter) can express every case. */
export const FULL_MDB: Capabilities = Object.freeze({
  selection: true,
  implicitSession: true,
  multiVend: true,
  withdrawKeepsSession: true,
  dispenseFailure: true,
  vmcReset: true,
  strayOutcome: true,
  display: true,
  silence: true,
  unplug: true,
});

/** How a vend ends from the VMC's side. */
export interface EndOptions {
  /** The VMC ends a host-begun session after this vend; false keeps it open (multi-vend). */
  endSession: boolean;
}

/** The machine (the VMC and its customer, or the pulse machine) as the suite drives it. */
export interface MachineSide {
  /**
   * The customer chooses `item` at `price` (selection first, or inside a session). Resolves false when the
   * machine visibly could not take it (reader off, link closed); true does not promise an event.
   */
  requestVend(item: number, price: Minor): Promise<boolean>;
  /** The approved vend ends: the product came out (`success`) or not (`failure`). */
  dispense(outcome: "success" | "failure", opts: EndOptions): Promise<void>;
  /** The machine withdraws the pending request before approval (return button, VMC timeout). */
  withdrawRequest(): Promise<void>;
  /** The VMC ends an idle session (SESSION COMPLETE). */
  completeSession(): Promise<void>;
  /** The VMC resets. */
  reset(): Promise<void>;
  /** An outcome line for a vend nobody approved. */
  strayOutcome(): Promise<void>;
  /** The machine stops (true) or resumes (false) answering host commands. */
  silence(on: boolean): void;
  /** Pulls the link; resolves once it is gone on the machine's side. */
  unplug(): Promise<void>;
  /** Puts the link back; resolves once the machine sees the reader enabled again. */
  replug(): Promise<void>;
  /** The machine would take a selection now (reader enabled and, on a wire, configured by the host). */
  ready(): boolean;
  /** Approved amounts the machine received, in order; null when the machine cannot tell. */
  approvals(): Minor[] | null;
  /** Texts the machine was asked to display; null when the machine cannot tell. */
  displays(): string[] | null;
  /** Host commands the machine found out of protocol (always empty for in-process machines). */
  violations(): string[];
}

/** One controller and its machine, made fresh for each case. */
export interface Subject {
  readonly ctrl: VendController;
  readonly machine: MachineSide;
  /** The one request a machine without item selection makes (pulse), or null when unknown (real VMC). */
  readonly fixedRequest: { item: number; price: Minor } | null;
  /** True when time is a ManualClock the subject advances (exact timer assertions are possible). */
  readonly injectedClock: boolean;
  /** The controller's command timeout (ms), for the silence case. */
  readonly commandTimeoutMs: number;
  /** Waits, bounded, until `check()` holds: flushes on an injected clock, polls on the real one. */
  until(check: () => boolean, what: string): Promise<void>;
  /**
   * Lets everything the machine sent so far reach the open controller and its events the listeners (a
   * barrier line on a wire; a flush in process), so a test can assert that no event came.
   */
  settle(): Promise<void>;
  /** Like `settle` for a closed controller: what the machine sent could have arrived by now. */
  quiet(): Promise<void>;
  /** Lets `ms` pass: advances the injected clock, or waits on the real one. */
  elapse(ms: number): Promise<void>;
  /** Closes the controller (idempotent) and releases what this case made. */
  teardown(): Promise<void>;
}

/** A subject kind: its capabilities and how to make one per case. */
export interface SubjectDef {
  readonly name: string;
  readonly caps: Capabilities;
  /** When set, the whole suite is skipped and this reason printed (socat missing, no device). */
  readonly skip?: string | undefined;
  /** Per-case time limit (ms); a human-driven run needs minutes. */
  readonly timeoutMs?: number;
  /** Once per suite: shared resources (one PTY for all cases). */
  setup(): Promise<SubjectFactory>;
}

export interface SubjectFactory {
  make(): Promise<Subject>;
  dispose(): Promise<void>;
}

/** Records the controller's events for a case. */
export class Events {
  readonly all: VmcEvent[] = [];

  readonly push = (e: VmcEvent): void => {
    this.all.push(e);
  };

  /** Events without `link` (link health is asserted only where a case is about it). */
  get list(): VmcEvent[] {
    return this.all.filter((e) => e.type !== "link");
  }

  types(): string[] {
    return this.list.map((e) => e.type);
  }

  has(type: VmcEvent["type"]): boolean {
    return this.all.some((e) => e.type === type);
  }

  count(type: VmcEvent["type"]): number {
    return this.all.filter((e) => e.type === type).length;
  }
}
