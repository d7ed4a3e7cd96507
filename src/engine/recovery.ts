import {
  CONFLICT_PREFIX,
  isConflict,
  type Journal,
  PLAN_DRIVER,
  type SessionRow,
} from "../journal/journal.js";
import type { PaymentObservation, PaymentRef } from "../payment/driver.js";
import { PaymentError } from "../payment/errors.js";
import { conflictsWith, type PaymentCallDeps, settlePayment } from "./payments.js";
import { decideSettlement, settleActionOf } from "./settlement.js";
import type { SessionResult, SettleAction } from "./types.js";

export interface RecoveryOptions {
  /** What an approved vend with an unknown outcome becomes (MDB §7.4.7 default: capture). */
  unknownOutcome: SettleAction;
  /** How vend payments were started (for the ref of a session whose start response was lost). */
  paymentMode: "reservation" | "payment";
  /** CaptureType of vend reservations on the older interface; check-in sessions are always partial. */
  captureType?: "full" | "partial";
  /**
   * Plan vends (no payment in them; issue 31): `recover` them with the rest (default; nothing running),
   * `leave` them to the engine that serves members meanwhile (a live plan vend is its own), or recover
   * `only` them (start-up before the service answers: no request is sent).
   */
  planVends?: "recover" | "leave" | "only";
}

export interface RecoveryReport {
  resolved: { orderId: string; result: SessionResult; how: string }[];
  /**
   * Sessions that could not be resolved now; tried again at the next sweep. `waiting`: the service could
   * not be asked (unreachable, no definite answer), so the unit must not go in service before they are
   * settled; false when the service answered in a way only a person can resolve (logged for review).
   */
  pending: { orderId: string; why: string; waiting: boolean }[];
  /**
   * Sessions whose journaled decision the service contradicts (captured what was to be cancelled, or the
   * reverse): flagged for review and left unsettled, logged at error level when first found; nothing is
   * sent for them, now or later. A person settles them (`vendd journal flagged`).
   */
  conflicts: { orderId: string; why: string }[];
}

/** Sessions recovered at the same time (each one's own steps stay in order); see `recoverSessions`. */
export const RECOVERY_CONCURRENCY = 8;

type Entry =
  | { kind: "resolved"; value: RecoveryReport["resolved"][number] }
  | { kind: "pending"; value: RecoveryReport["pending"][number] }
  | { kind: "conflict"; value: RecoveryReport["conflicts"][number] };

/**
 * Resolves every unresolved session of the journal, before the VMC is enabled (reliability.md §2.1 step 4):
 * query the service first, then apply the journaled decision; without a decision, apply the policy the
 * session's recorded state implies. Never decides from the service's list of reserved payments.
 *
 * Up to `concurrency` sessions (default RECOVERY_CONCURRENCY) are in progress at once: sessions are
 * independent (one order id, one payment each), and each session's steps (query, decide, intent, request,
 * outcome, close) still run in their order, each journal write before the request it guards. 1,000 sessions
 * left by a crash are settled in seconds instead of 1,000 round trips one after the other. Two journal
 * commits per settled session: the decision with its intent (before the request), then the intent's outcome
 * with the close and its event (after the answer). The report lists
 * sessions in the journal's order whatever order they finished in. An error that is not a payment error
 * (a journal write failed) stops new sessions from starting and is thrown once those in progress finished.
 */
export async function recoverSessions(
  journal: Journal,
  deps: PaymentCallDeps,
  opts: RecoveryOptions,
  concurrency = RECOVERY_CONCURRENCY,
): Promise<RecoveryReport> {
  const plans = opts.planVends ?? "recover";
  const sessions = journal
    .unresolved()
    .filter((s) => (s.driver === PLAN_DRIVER ? plans !== "leave" : plans !== "only"));
  const entries: (Entry | undefined)[] = new Array(sessions.length);
  let next = 0;
  let failure: { err: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < sessions.length) {
      const i = next++;
      const session = sessions[i];
      if (session === undefined) continue;
      try {
        entries[i] = await recoverEntry(journal, deps, opts, session);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  const width = Math.max(1, Math.min(Math.floor(concurrency), sessions.length));
  await Promise.all(Array.from({ length: width }, () => worker()));
  if (failure !== null) throw (failure as { err: unknown }).err;
  const report: RecoveryReport = { resolved: [], pending: [], conflicts: [] };
  for (const e of entries) {
    if (e?.kind === "resolved") report.resolved.push(e.value);
    else if (e?.kind === "pending") report.pending.push(e.value);
    else if (e?.kind === "conflict") report.conflicts.push(e.value);
  }
  return report;
}

/** Recovers one session; throws only what is not a payment error. */
async function recoverEntry(
  journal: Journal,
  deps: PaymentCallDeps,
  opts: RecoveryOptions,
  session: SessionRow,
): Promise<Entry> {
  try {
    const outcome = await recoverOne(journal, deps, opts, session);
    if (outcome.conflict) {
      markConflict(journal, deps, session, outcome.how);
      return { kind: "conflict", value: { orderId: session.orderId, why: outcome.how } };
    }
    if (outcome.result === null)
      return {
        kind: "pending",
        value: { orderId: session.orderId, why: outcome.how, waiting: outcome.waiting },
      };
    // One commit: the intent's outcome (when there was one), the close and its event.
    journal.atomically(() => {
      outcome.finish?.();
      journal.closeSession(session.id, outcome.result, `recovered: ${outcome.how}`);
      journal.event(session.id, "recovered", { result: outcome.result, how: outcome.how });
    });
    return {
      kind: "resolved",
      value: { orderId: session.orderId, result: outcome.result, how: outcome.how },
    };
  } catch (err) {
    if (!(err instanceof PaymentError)) throw err;
    return {
      kind: "pending",
      value: {
        orderId: session.orderId,
        why: `${err.code}: ${err.message}`,
        waiting: err.code === "unavailable" || err.code === "unauthorized" || err.ambiguous,
      },
    };
  }
}

/**
 * Flags a conflicting session and closes it `unsettled` with a `conflict: ` reason, logging at error level;
 * once only (a session already marked is left as it is).
 */
function markConflict(journal: Journal, deps: PaymentCallDeps, s: SessionRow, why: string): void {
  if (isConflict(s)) return;
  journal.atomically(() => {
    journal.flag(s.id, why);
    journal.closeSession(s.id, "unsettled", `${CONFLICT_PREFIX}${why}`);
  });
  deps.logger.error(
    { session: s.id, orderId: s.orderId, why },
    "settlement conflicts with the payment service; flagged for review",
  );
}

/**
 * A plan vend (issue 18) has no payment: nothing to ask the service. An approval without an outcome counts
 * as an unknown outcome (counted against the member's allowance, as MDB §7.4.7 counts it as delivered);
 * a session never approved is denied.
 */
function recoverPlanVend(
  journal: Journal,
  s: SessionRow,
): { result: SessionResult; how: string; finish?: () => void } {
  if (s.approvedAmount === null) return { result: "denied", how: "plan vend never approved" };
  if (s.vendOutcome === null)
    return {
      result: "captured",
      how: "plan vend approved, outcome unknown: counted",
      finish: () => journal.recordVend(s.id, "unknown"),
    };
  const delivered = s.vendOutcome === "success" || s.vendOutcome === "unknown";
  return { result: delivered ? "captured" : "cancelled", how: `plan vend ${s.vendOutcome}` };
}

async function recoverOne(
  journal: Journal,
  deps: PaymentCallDeps,
  opts: RecoveryOptions,
  s: SessionRow,
): Promise<
  /** `finish`: journal writes that belong with the session's close (written in its transaction). */
  | { result: SessionResult; how: string; conflict?: undefined; finish?: () => void }
  | { result: null; how: string; waiting: boolean; conflict?: true }
> {
  if (s.driver === PLAN_DRIVER) return recoverPlanVend(journal, s);
  const obs = await observe(journal, deps, opts, s);
  if (obs === null) {
    // The service never created the payment: nothing was reserved.
    const finish = () => {
      for (const i of journal.intents(s.id))
        if (i.state === "pending") journal.completeIntent(i.id, "failed", "not found at the service");
    };
    return { result: "denied", how: "payment never created", finish };
  }
  const ref = obs.ref;
  if (s.decision !== null && conflictsWith(s.decision.action, obs.state))
    return {
      result: null,
      waiting: false,
      conflict: true,
      how: `decided ${s.decision.action}, but the service shows the payment ${obs.state}`,
    };
  const decision = s.decision ?? decide(journal, s, obs, opts);
  if (decision === null) return { result: "denied", how: `payment ${obs.state}, nothing to settle` };
  // One commit before the request: the decision (when new) and the settlement intent.
  const intent = journal.atomically(() => {
    if (s.decision === null) journal.decide(s.id, decision);
    return journal.recordIntent({
      sessionId: s.id,
      op: decision.action === "cancel" && ref.mode === "payment" ? "refund" : decision.action,
      orderId: s.orderId,
      paymentId: ref.id,
      amount: decision.amount,
    });
  });
  const r = await settlePayment(deps, {
    ref,
    action: decision.action,
    amount: decision.amount,
    intent,
    refundOrderId: `${s.orderId}r`,
  });
  if (!r.ok && r.conflict) {
    journal.completeIntent(intent.id, "failed", r.detail);
    return { result: null, how: r.detail, waiting: false, conflict: true };
  }
  if (!r.ok) return { result: null, how: r.detail, waiting: r.retryable };
  return {
    result: decision.action === "capture" ? "captured" : "cancelled",
    how: `${decision.reason} (${r.detail})`,
    finish: () => journal.completeIntent(intent.id, "done", r.detail),
  };
}

async function observe(
  journal: Journal,
  deps: PaymentCallDeps,
  opts: RecoveryOptions,
  s: SessionRow,
): Promise<PaymentObservation | null> {
  if (s.paymentId !== null) {
    const ref: PaymentRef = { id: s.paymentId, orderId: s.orderId, ...refShape(s, opts) };
    return deps.payment.status(ref, deps.signal);
  }
  const found = await deps.payment.lookup(s.orderId, deps.signal);
  if (found === null) return null;
  journal.setPaymentId(s.id, found.ref.id);
  return { ...found, ref: { ...found.ref, ...refShape(s, opts) } };
}

/**
 * The decision for a session that crashed before it decided: the one money policy (`decideSettlement`)
 * over the journaled vends and what the service says about the payment; null when there is nothing to settle.
 */
function decide(
  journal: Journal,
  s: SessionRow,
  obs: PaymentObservation,
  opts: RecoveryOptions,
): { action: SettleAction; amount: number; reason: string; review: boolean } | null {
  const d = decideSettlement({
    price: s.price,
    vends: journal.vends(s.id).map((v) => ({ amount: v.price, outcome: v.outcome })),
    paymentState: obs.state,
    mode: obs.ref.mode,
    policy: opts.unknownOutcome,
  });
  if (d.action === "none") return null;
  return { action: settleActionOf(d), amount: d.amount, reason: d.reason, review: d.review };
}

/**
 * What the journal implies about a session's payment: check-in sessions are Partial reservations (they
 * capture what was vended); vend payments follow the configured mode and CaptureType.
 */
function refShape(s: SessionRow, opts: RecoveryOptions): Pick<PaymentRef, "mode" | "captureType"> {
  if (s.flow === "checkin") return { mode: "reservation", captureType: "partial" };
  return {
    mode: opts.paymentMode,
    ...(opts.captureType === undefined ? {} : { captureType: opts.captureType }),
  };
}
