import type { Logger } from "pino";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import { type FaultPoints, NO_FAULTS } from "../core/faults.js";
import type { Journal } from "../journal/journal.js";
import type { PaymentDriver } from "../payment/driver.js";
import type { EngineDeps, EngineOptions } from "./options.js";
import type { EngineInput, Flow } from "./types.js";

/**
 * The I/O an effect may do: the journal and the devices, the ids of new sessions, and the engine's stop
 * signal (requests in flight give up on it). Fixed once the engine has started.
 */
export interface EffectIO {
  readonly journal: Journal;
  readonly payment: PaymentDriver;
  readonly vmc: VendController;
  readonly display: CheckinDisplay;
  readonly logger: Logger;
  readonly faults: FaultPoints;
  readonly signal: AbortSignal;
  /** The id of a new session (EngineDeps.newId). */
  newId(): string;
  readonly flow: Flow;
  readonly paymentMode: EngineOptions["paymentMode"];
  readonly captureType: EngineOptions["captureType"];
}

/** The effects' I/O from the engine's deps and options, once the engine has started. */
export function effectIO(deps: EngineDeps, opts: EngineOptions, flow: Flow, signal: AbortSignal): EffectIO {
  const { journal, payment, vmc, display, logger, newId } = deps;
  const { paymentMode, captureType } = opts;
  return {
    journal,
    payment,
    vmc,
    display,
    logger,
    newId,
    faults: deps.faults ?? NO_FAULTS,
    signal,
    flow,
    paymentMode,
    captureType,
  };
}

/** How a request's result becomes an input: its journal writes and the input commit in one step. */
export interface Outcome {
  /** Journal writes of the result, run in the transaction of the step that `input` starts. */
  record?: () => void;
  /** Runs once that step has committed (a fault point after a commit that did not wait for fsync). */
  committed?: () => void;
  input: EngineInput;
}

/**
 * I/O an effect describes; the runner performs it only after the step's journal writes have committed,
 * tracks it (whenIdle, stop) and dispatches the input it resolves to.
 */
export interface Request {
  /** What it does, for the log. */
  what: string;
  /** True for a mutation whose failure (a bug, a crash point) takes the unit out of service; false for a
   * command whose failure is only logged. */
  critical: boolean;
  run(): Promise<Outcome | undefined>;
}
