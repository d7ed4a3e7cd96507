import type { Logger } from "pino";
import { type CheckinDisplay, checkinUri } from "../../drivers/display/display.js";
import type { VendController } from "../../drivers/vmc/controller.js";
import type { Clock } from "../core/clock.js";
import type { FaultPoints } from "../core/faults.js";
import type { Minor } from "../core/money.js";
import type { Journal } from "../journal/journal.js";
import type { PaymentDriver } from "../payment/driver.js";
import type { EngineContext, PlanDecision, SessionResult } from "./types.js";

/**
 * Member plan vends (issue 18): asked once per VMC vend request while the engine is idle (selection
 * first), synchronously and without any network: a member's tap armed the gate (the daemon's, from the
 * signed entitlement list and the journal's usage counts). Null: no member, the normal payment flow.
 */
export interface PlanGate {
  decide(item: number, price: Minor): PlanDecision | null;
  /**
   * Null when no badge tap is being handled; otherwise resolves when it is decided (bounded by the gate):
   * a vend request taken while idle waits for it (issue 31).
   */
  settling?(): Promise<void> | null;
}

export interface EngineOptions {
  /** Selection first (default) or check-in first. */
  flow?: EngineContext["flow"];
  /** Check-in first: `poll` the check-in query, or keep an `idlePayment` initiated. */
  checkinMode?: EngineContext["checkinMode"];
  /** Check-in first: the amount reserved per session, minor units (default 2000). */
  sessionMax?: number;
  /** Selection first: the highest VMC price paid for, minor units (default 50000, as `engine.maxPrice`). */
  maxPrice?: number;
  currency: string;
  /** QR scheme of the check-in URI (pos-v10 §15). */
  scheme: string;
  /** ms the customer has to pay (and, in a session, to choose). */
  paymentTimeoutMs: number;
  /** ms the VMC has to report a vend's outcome. */
  vendTimeoutMs: number;
  unknownOutcome: EngineContext["unknownOutcome"];
  /** How vend payments start: reservations, or the older interface's direct payments. */
  paymentMode: "reservation" | "payment";
  captureType: "full" | "partial";
}

export interface EngineDeps {
  payment: PaymentDriver;
  vmc: VendController;
  display: CheckinDisplay;
  journal: Journal;
  clock: Clock;
  logger: Logger;
  /** Member plan vends (issue 18); absent: every vend is paid. */
  plans?: PlanGate;
  /** Named crash points of the money path (default: none armed). */
  faults?: FaultPoints;
  /**
   * A new session id (a UUID for the journal). Injected so tests can pass predictable ids; createEngine
   * (factory.ts) defaults it to node:crypto's randomUUID.
   */
  newId: () => string;
  /**
   * Numbers in [0, 1): the jitter of the engine's payment and check-in polls after a failed poll. Injected
   * so tests can pass a seeded one (core/random.ts); createEngine defaults it to Math.random.
   */
  random: () => number;
}

/** The deps createEngine takes: ids and randomness may be left to its defaults. */
export type EngineSeams = Omit<EngineDeps, "newId" | "random"> &
  Partial<Pick<EngineDeps, "newId" | "random">>;

export interface FinishedSession {
  sessionId: string;
  orderId: string;
  price: number;
  result: SessionResult;
  reason: string;
}

/** The machine's fixed facts (types.ts EngineContext) from the options and the PoS the service opened. */
export function engineContext(opts: EngineOptions, beaconId: string): EngineContext {
  return {
    flow: opts.flow ?? "selection",
    checkinMode: opts.checkinMode ?? "poll",
    sessionMax: opts.sessionMax ?? 2000,
    maxPrice: opts.maxPrice ?? 50_000,
    currency: opts.currency,
    checkinUri: checkinUri(opts.scheme, beaconId),
    paymentTimeoutMs: opts.paymentTimeoutMs,
    vendTimeoutMs: opts.vendTimeoutMs,
    unknownOutcome: opts.unknownOutcome,
  };
}
