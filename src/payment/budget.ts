import type { PaymentDriverKind } from "./driver.js";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "./legacy/options.js";
import { type Backoff, cappedDelay, clampRetries, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
import { DEFAULT_V10_TIMEOUTS } from "./v10/options.js";

/**
 * The retry budget of every payment operation, as data: for each request an operation may send, how many
 * times each layer may cause it. The code reads its limits from `LIMITS`; `worstCase` multiplies the layers
 * out into the worst-case number of requests and time to a final answer; the PaymentDriver doc comment
 * (driver.ts) states those numbers at the defaults, and tests hold the code, the table and the doc together
 * (budget.test.ts: doc = table; test/payment/contract/budget.test.ts: the emulator's count under its worst faults
 * ≤ table).
 *
 * The layers, outermost first:
 * - `engine` (src/engine/payments.ts): calls one mutation once; an ambiguous outcome is resolved by ONE
 *   status query (lookup for a start), never by sending the mutation again. What is still unknown is left
 *   to recovery, which runs the same budget again at its next sweep.
 * - `driver`: the driver's own steps: a read after a 409, the older interface's one repeat after a lost
 *   answer (pos-legacy §11), the busy-PoS recovery, refund polls.
 * - `transport`: `retried` requests get `1 + policy.max` attempts (V10 GET/DELETE, keyed POSTs, capture and
 *   cancel, pos-v10 §12); `once` requests are never repeated by the transport (every older-interface
 *   request: no idempotency keys; V10 polls: the poll loop is their retry).
 */

/** Limits the code reads (each is a layer's attempt count in the table below). */
export const LIMITS = Object.freeze({
  /** Older interface: sends of one mutation, the first and one repeat after a lost answer (pos-legacy §11). */
  legacySends: 2,
  /** V10 refund flow R1: polls of an `Initiated` refund after the first read (pos-v10 §8). */
  refundPolls: 10,
  /** V10 1301 recovery: payments of the PoS read to find the active one (a PoS has one, pos-v10 §12). */
  busyReads: 3,
  /** Payment watch: consecutive failed polls before it gives up (watch.ts). */
  watchFailures: 10,
});

/** One request an operation may send, and how often each layer may cause it. */
export interface BudgetSlot {
  /** The request, for the doc and test messages. */
  readonly request: string;
  /** Its timeout: `post` (V10 POST and DELETE, every older-interface request) or `get` (V10 GET). */
  readonly timeout: "post" | "get";
  /** Times the engine causes it (1: the engine never repeats, it resolves with one query). */
  readonly engine: number;
  /** Times one driver call may send it. */
  readonly driver: number;
  /** Whether the transport repeats it (`1 + policy.max` attempts) or sends it once. */
  readonly transport: "retried" | "once";
}

export interface OperationBudget {
  readonly slots: readonly BudgetSlot[];
  /** Jittered waits between the driver's own steps (older-interface repeats), each ≤ one first backoff. */
  readonly repeatWaits: number;
  /** Waits between polls, each ≤ 1.5 × the service's poll delay (retry.ts `pollRetryDelay`). */
  readonly pollWaits: number;
}

export type BudgetInterface = Exclude<PaymentDriverKind, "sim">;

/**
 * Operations: the four mutating calls, `busy` (what a busy PoS adds to one start: V10 409 1301, older 50),
 * the older interface's direct-payment variants, and the reads and set-up calls.
 */
export type BudgetOperation =
  | "open"
  | "token"
  | "status"
  | "lookup"
  | "start"
  | "busy"
  | "capture"
  | "cancel"
  | "payCancel"
  | "refund"
  | "partialRefund";

const slot = (
  request: string,
  timeout: BudgetSlot["timeout"],
  engine: number,
  driver: number,
  transport: BudgetSlot["transport"],
): BudgetSlot => Object.freeze({ request, timeout, engine, driver, transport });

const op = (slots: BudgetSlot[], repeatWaits = 0, pollWaits = 0): OperationBudget =>
  Object.freeze({ slots: Object.freeze(slots), repeatWaits, pollWaits });

const { legacySends, refundPolls, busyReads } = LIMITS;

const V10: Readonly<Partial<Record<BudgetOperation, OperationBudget>>> = Object.freeze({
  open: op([
    slot("GET /v10/stores (no storeId configured)", "get", 1, 1, "retried"),
    slot("GET /v10/pointofsales?merchantPosId, GET /v10/pointofsales/{id}", "get", 1, 2, "retried"),
    slot("DELETE /v10/pointofsales/{id} (the PoS changed)", "post", 1, 1, "retried"),
    slot("POST /v10/pointofsales", "post", 1, 1, "retried"),
    slot("GET list + read after 409 1200", "get", 1, 2, "retried"),
    slot("GET /v10/pointofsales/{id} (read back)", "get", 1, 1, "retried"),
  ]),
  token: op([slot("POST {tokenUrl}", "post", 1, 1, "retried")]),
  status: op([slot("GET /v10/payments/{id}", "get", 1, 1, "retried")]),
  lookup: op([
    slot("GET /v10/payments?orderId (active, then captured), GET /v10/payments/{id}", "get", 1, 3, "retried"),
  ]),
  start: op([
    slot("POST /v10/payments", "post", 1, 1, "retried"),
    slot("lookup after an ambiguous start (engine)", "get", 1, 3, "retried"),
  ]),
  busy: op([
    slot("GET /v10/payments?posId", "get", 1, 1, "retried"),
    slot("GET /v10/payments/{id} of listed payments", "get", 1, busyReads, "retried"),
    slot("POST /v10/payments/{id}/cancel of the stranger's payment", "post", 1, 1, "retried"),
    slot("GET /v10/payments/{id} after 409 1300", "get", 1, 1, "retried"),
    slot("POST /v10/payments (derived key)", "post", 1, 1, "retried"),
  ]),
  capture: op([
    slot("POST /v10/payments/{id}/capture", "post", 1, 1, "retried"),
    slot("GET /v10/payments/{id} after 409 1304/1307", "get", 1, 1, "retried"),
    slot("GET /v10/payments/{id} (engine: after an ambiguous or refused capture)", "get", 1, 1, "retried"),
  ]),
  cancel: op([
    slot("POST /v10/payments/{id}/cancel", "post", 1, 1, "retried"),
    slot("GET /v10/payments/{id} after 409 1300", "get", 1, 1, "retried"),
    slot("GET /v10/payments/{id} (engine: after an ambiguous or refused cancel)", "get", 1, 1, "retried"),
  ]),
  refund: op(
    [
      slot("POST /v10/refunds", "post", 1, 1, "retried"),
      slot("GET /v10/refunds/{id} (first read and polls)", "get", 1, 1 + refundPolls, "once"),
      slot("POST /v10/refunds/{id}/capture", "post", 1, 1, "retried"),
      slot("GET /v10/refunds/{id} after 409 1351", "get", 1, 1, "retried"),
    ],
    0,
    refundPolls,
  ),
});

const LEGACY: Readonly<Partial<Record<BudgetOperation, OperationBudget>>> = Object.freeze({
  open: op([
    slot("ReadPoSAssignPoSUnitId (before and after registering)", "post", 1, 2, "once"),
    slot("RegisterPoS or UpdateRegisteredPoSName", "post", 1, 1, "once"),
    slot("AssignPoSUnitIdToPos", "post", 1, 1, "once"),
  ]),
  status: op([slot("GetReservationStatus or GetPaymentStatus", "post", 1, 1, "once")]),
  lookup: op([slot("GetReservationStatus, GetPaymentStatus", "post", 1, 2, "once")]),
  start: op(
    [
      slot("ReservationStart or PaymentStart", "post", 1, legacySends, "once"),
      slot("status after a lost answer or a repeat answered 50", "post", 1, legacySends, "once"),
      slot("lookup after an ambiguous start (engine)", "post", 1, 2, "once"),
    ],
    1,
  ),
  busy: op(
    [
      slot("GetCurrentPayment, GetCurrentReservation", "post", 1, 2, "once"),
      slot("PaymentCancel or ReservationCancel of a stranger's entity", "post", 1, 2, "once"),
      slot("ReservationStart or PaymentStart once more", "post", 1, legacySends, "once"),
      slot("status after a lost answer or a repeat answered 50", "post", 1, legacySends, "once"),
    ],
    1,
  ),
  capture: op(
    [
      slot("GetReservationStatus (CaptureType Full: the reserved amount)", "post", 1, 1, "once"),
      slot(
        "ReservationCapture (the identical capture repeated after a lost answer)",
        "post",
        1,
        legacySends,
        "once",
      ),
      slot("status (engine: after an ambiguous or refused capture)", "post", 1, 1, "once"),
    ],
    1,
  ),
  cancel: op(
    [
      slot("ReservationCancel", "post", 1, legacySends, "once"),
      slot("GetReservationStatus after a lost or refused cancel", "post", 1, legacySends, "once"),
      slot("status (engine: after an ambiguous or refused cancel)", "post", 1, 1, "once"),
    ],
    1,
  ),
  payCancel: op(
    [
      slot("GetPaymentStatus (engine: paid or not, before settling)", "post", 1, 1, "once"),
      slot(
        "GetPaymentStatus, GetCurrentPayment, PaymentCancel per attempt",
        "post",
        1,
        3 * legacySends,
        "once",
      ),
      slot("status (engine: after an ambiguous or refused cancel)", "post", 1, 1, "once"),
    ],
    1,
  ),
  refund: op(
    [
      slot("GetPaymentStatus (engine: paid or not, before settling)", "post", 1, 1, "once"),
      slot("GetPaymentStatus (the paid amount: full or partial)", "post", 1, 1, "once"),
      slot('PaymentRefund "0.00" (repeated after a lost answer; 3 = done)', "post", 1, legacySends, "once"),
      slot("status (engine: after an ambiguous or refused refund)", "post", 1, 1, "once"),
    ],
    1,
  ),
  partialRefund: op([
    slot("GetPaymentStatus (the paid amount)", "post", 1, 1, "once"),
    slot("PaymentRefund of a part (never repeated: no key, pos-legacy §11)", "post", 1, 1, "once"),
  ]),
});

/** THE table: the budget of each operation of each interface. */
export const BUDGETS: Readonly<
  Record<BudgetInterface, Readonly<Partial<Record<BudgetOperation, OperationBudget>>>>
> = Object.freeze({ v10: V10, legacy: LEGACY });

/** What the worst case depends on besides the table. All durations in ms. */
export interface BudgetParams {
  /** Per-request timeouts (the older interface has one: `postMs`; `getMs` is then unused). */
  timeouts: { postMs: number; getMs: number };
  /** The transport's retries and backoff (V10). */
  policy: RetryPolicy;
  /** The backoff before an older-interface repeat. */
  repeat: Backoff;
  /** The service's refund poll delay (`pollDelayInMs`; pos-v10's example and the emulator: 100). */
  refundPollDelayMs: number;
}

/** The defaults of the drivers, read from their options modules (pos-v10 §12; legacy `requestTimeoutMs`). */
export const DEFAULT_PARAMS: Readonly<Record<BudgetInterface, BudgetParams>> = Object.freeze({
  v10: {
    timeouts: { ...DEFAULT_V10_TIMEOUTS },
    policy: DEFAULT_RETRY_POLICY,
    repeat: DEFAULT_RETRY_POLICY,
    refundPollDelayMs: 100,
  },
  legacy: {
    timeouts: { postMs: DEFAULT_REQUEST_TIMEOUT_MS, getMs: DEFAULT_REQUEST_TIMEOUT_MS },
    policy: DEFAULT_RETRY_POLICY,
    repeat: DEFAULT_RETRY_POLICY,
    refundPollDelayMs: 100,
  },
});

export interface WorstCase {
  /** Requests sent at most. */
  requests: number;
  /** Time to a final answer at most, ms (every request timing out, every backoff at its upper bound). */
  timeMs: number;
}

/** The budget of `operation` on `iface`; throws for an operation the interface does not have. */
export function budgetOf(iface: BudgetInterface, operation: BudgetOperation): OperationBudget {
  const b = BUDGETS[iface][operation];
  if (b === undefined) throw new Error(`no ${operation} budget for the ${iface} interface`);
  return b;
}

/**
 * The worst case of one operation: per slot, engine × driver × transport attempts requests, each taking
 * its timeout, plus the transport's backoffs between attempts, the driver's repeat waits and poll waits.
 */
export function worstCase(
  iface: BudgetInterface,
  operation: BudgetOperation,
  params: BudgetParams = DEFAULT_PARAMS[iface],
): WorstCase {
  const b = budgetOf(iface, operation);
  const retried = 1 + clampRetries(params.policy.max);
  let backoffs = 0;
  for (let k = 1; k < retried; k++) backoffs += cappedDelay(k, params.policy);
  let requests = 0;
  let timeMs = 0;
  for (const s of b.slots) {
    const sends = s.engine * s.driver;
    const attempts = s.transport === "retried" ? retried : 1;
    const timeout = s.timeout === "get" ? params.timeouts.getMs : params.timeouts.postMs;
    requests += sends * attempts;
    timeMs += sends * (attempts * timeout + (s.transport === "retried" ? backoffs : 0));
  }
  timeMs += b.repeatWaits * cappedDelay(1, params.repeat);
  const poll = params.refundPollDelayMs;
  timeMs += b.pollWaits * (poll + Math.floor(poll / 2));
  return { requests, timeMs };
}
