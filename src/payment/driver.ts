import type { Minor } from "../core/money.js";

/**
 * The one interface between the engine and a payment service, in the engine's terms. Implementations:
 * `v10/` (REST), `legacy/` (the older operation-based interface) and `sim` (the emulator's model called
 * in-process, for engine tests).
 *
 * Failure semantics, shared by every implementation:
 * - Methods reject only with a `PaymentError` (see errors.ts). `err.ambiguous === true` means the request
 *   may have been applied (timeout, connection reset, lost response, 5xx after sending): the caller must
 *   resolve it with `status()` or `lookup()`, never by guessing, and may repeat a creating call only with the
 *   same idempotency key (V10) or after a status query showed nothing was created (older interface).
 * - Mutations (`start`, `capture`, `cancel`, `refund`) are sent only after the caller has journaled the
 *   intent; the driver never invents keys or order ids itself.
 * - `capture` and `cancel` are idempotent for the same arguments: repeating a call that was applied
 *   resolves, it does not double the effect.
 * - Polling methods (`status`, `checkin`) report the service's earliest next poll in `pollDelayMs`; the
 *   caller must not poll sooner.
 *
 * Retry budget. Three layers may repeat a request, and each repeats only what the layer below cannot:
 * the transport (V10: `1 + retries.max` attempts of a GET, a DELETE, a keyed POST, a capture or a cancel;
 * the older interface: never), the driver (a read after a 409, the older interface's one repeat after a
 * lost answer, the busy-PoS recovery, refund polls) and the engine (src/engine/payments.ts: the mutation
 * ONCE, an unknown outcome resolved by one status query or lookup, the rest left to recovery, which tries
 * again with the same budget at its next sweep). retry.ts decides every repeat and its jittered wait;
 * budget.ts is the table of attempts per layer. Its worst case at the defaults (V10: POST and DELETE 2 s,
 * GET 0.5 s, 2 retries with backoffs ≤ 100 + 200 ms; older interface: 2 s per request, a repeat after
 * ≤ 100 ms), every request timing out and every wait at its bound, per logical call:
 *
 * | operation     | V10 requests | V10 time | older requests | older time |
 * |---------------|--------------|----------|----------------|------------|
 * | start         | 12           | 11.7 s   | 6              | 12.1 s     |
 * | busy          | 21           | 21.6 s   | 8              | 16.1 s     |
 * | capture       | 9            | 9.9 s    | 4              | 8.1 s      |
 * | cancel        | 9            | 9.9 s    | 5              | 10.1 s     |
 * | payCancel     | –            | –        | 8              | 16.1 s     |
 * | refund        | 20           | 21.4 s   | 5              | 10.1 s     |
 * | partialRefund | –            | –        | 2              | 4 s        |
 * | open          | 24           | 23.4 s   | 4              | 8 s        |
 * | status        | 3            | 1.8 s    | 1              | 2 s        |
 * | lookup        | 9            | 5.4 s    | 2              | 4 s        |
 * | token         | 3            | 6.3 s    | –              | –          |
 *
 * `start`, `capture`, `cancel` as the engine makes them (the resolving query included); `busy`: what a
 * busy PoS adds to one start, once (V10 409 1301, older 50); `payCancel` and `refund` (older): the
 * engine's settlement of a direct payment (cancel before Done, full refund after it); V10 `refund`: the
 * driver call (R1, with ten poll waits of ≤ 1.5 × the refund's `pollDelayInMs`, 100 ms here);
 * `partialRefund`: never repeated (no key). V10 adds a token fetch (`token`) when the cached token is due
 * or refused, at most once per call. Times scale with the configured timeouts; `retries.max = m` makes
 * each V10 repeatable request `m + 1` attempts. test/payment/contract/budget.test.ts holds the drivers to the
 * table under the emulator's worst fault schedules; budget.test.ts holds this table to budget.ts.
 */
export interface PaymentDriver {
  readonly kind: PaymentDriverKind;

  /**
   * Brings the point of sale into service: authentication, store lookup, PoS lookup and (re)creation,
   * unit assignment. Idempotent. Returns how customers find this unit.
   */
  open(signal?: AbortSignal): Promise<PosIdentity>;

  /** Starts a payment (or a reservation) of `amount` for the journaled order. */
  start(req: StartRequest, signal?: AbortSignal): Promise<PaymentRef>;

  /** One status poll. */
  status(ref: PaymentRef, signal?: AbortSignal): Promise<PaymentObservation>;

  /**
   * Finds a payment of this PoS by its order id (recovery after a lost `start` response or a restart).
   * Resolves `null` when the service has no such payment.
   */
  lookup(orderId: string, signal?: AbortSignal): Promise<PaymentObservation | null>;

  /**
   * Captures `amount` of a reserved payment. `amount` equal to the reserved amount is a full capture; a
   * lower one is partial (refused with code `partialCaptureNotPossible` when the payment does not allow it).
   */
  capture(ref: PaymentRef, amount: Minor, signal?: AbortSignal): Promise<void>;

  /** Cancels (releases) a payment that is not captured. Resolves when it is cancelled or already was. */
  cancel(ref: PaymentRef, signal?: AbortSignal): Promise<void>;

  /** Refunds `amount` of a captured payment. */
  refund(req: RefundRequest, signal?: AbortSignal): Promise<RefundResult>;

  /** Payments still active or reserved on this PoS (for recovery after a restart). */
  findActive(signal?: AbortSignal): Promise<PaymentObservation[]>;

  /** One check-in poll: is a customer checked in on this PoS right now? */
  checkin(signal?: AbortSignal): Promise<CheckinObservation>;

  /** Releases connections and timers. */
  close(): Promise<void>;
}

export type PaymentDriverKind = "v10" | "legacy" | "sim";

export interface PosIdentity {
  /** The id customers check in with (V10 beaconId, older interface PoSUnitId). */
  beaconId: string;
  /** The service's PoS id (V10 posId, older PoSId). */
  posId: string;
  /** Name shown in the app after check-in. */
  name: string;
}

export interface StartRequest {
  /** Merchant order id, created by the journal (≤ 32 characters so that both interfaces accept it). */
  orderId: string;
  /** Amount in minor units (> 0). */
  amount: Minor;
  /** Created with the journal row before the first attempt; reused on every retry and after a restart. */
  idempotencyKey: string;
  /**
   * `reservation` (default): authorize now, capture or cancel later. `payment`: the older interface's direct
   * payment, money moves at Done and a failed vend is refunded. V10 supports only `reservation`.
   */
  mode?: "reservation" | "payment";
  /** Older-interface reservations: `full` captures the whole amount, `partial` any amount up to it. */
  captureType?: "full" | "partial";
}

/** Identifies one payment at the service. */
export interface PaymentRef {
  /** V10 paymentId; the older interface uses the OrderId. */
  id: string;
  orderId: string;
  mode: "reservation" | "payment";
  /**
   * Older-interface reservations: the CaptureType the reservation was started with. Set by the driver at
   * start and by recovery from the journal, so a capture after a restart uses the right one.
   */
  captureType?: "full" | "partial";
}

/**
 * Normalised payment states:
 * - `pending`: created, no customer yet (V10 Initiated/Prepared, older 10/30)
 * - `issued`: a customer has it in the app (V10 IssuedToUser/Paired, older 20/60/80)
 * - `reserved`: funds held, capture or cancel now (V10 Reserved, older reservation 100)
 * - `paid`: money moved (older direct payment 100)
 * - `captured`, `cancelled` (with `cancelReason`), `expired`, `failed` (older 50)
 */
export type PaymentState =
  | "pending"
  | "issued"
  | "reserved"
  | "paid"
  | "captured"
  | "cancelled"
  | "expired"
  | "failed";

export const FINAL_STATES: ReadonlySet<PaymentState> = new Set([
  "captured",
  "cancelled",
  "expired",
  "failed",
]);

export interface PaymentObservation {
  ref: PaymentRef;
  state: PaymentState;
  cancelReason?: "user" | "client" | "service";
  /** Amount in minor units when the service reports one. */
  amount: Minor | null;
  /** Meaningful only in `reserved`: false when only the full amount may be captured. */
  partialCapturePossible: boolean | null;
  /** Earliest next poll of this payment, ms. */
  pollDelayMs: number;
}

export interface CheckinObservation {
  checkedIn: boolean;
  pollDelayMs: number;
}

export interface RefundRequest {
  ref: PaymentRef;
  refundOrderId: string;
  amount: Minor;
  idempotencyKey: string;
}

export interface RefundResult {
  refundId: string;
  state: "reserved" | "captured" | "cancelled";
  /** Older interface: what is still refundable; null when the service does not say. */
  remainder: Minor | null;
}
