/**
 * Payment errors are one class with a closed code, chosen in one place per interface from the HTTP status
 * and the service's code. Callers branch on `code` and `ambiguous`, never on message text.
 */
export type PaymentErrorCode =
  /** Network failure, timeout, reset or 5xx: the request may have been applied. */
  | "unavailable"
  /** The service refused our credentials (401 after one refresh, older-interface signature). */
  | "unauthorized"
  /** Our request was malformed or refused as invalid (4xx that retrying will not fix). */
  | "invalid"
  /** The resource is owned by another integrator or merchant (403). */
  | "forbidden"
  /** No such payment, PoS or order. */
  | "notFound"
  /** Another payment is active on the PoS (V10 1301, older 50 on start). */
  | "busy"
  /** The resource's state does not allow the operation (V10 1300/1304/1307/1351/1352, older 40/50). */
  | "conflict"
  /** Capture of less than the reserved amount when the payment forbids it (V10 1308). */
  | "partialCaptureNotPossible"
  /** The idempotency key was already used for a different request (V10 1306). */
  | "idempotencyMismatch"
  /** A refund the service refused (amount too high, too old, already refunded). */
  | "refundRefused";

/**
 * `cause` (ES2022) keeps the error behind the failure (undici's, or the PaymentError a flow re-classified)
 * for logs and debugging; the logger's error serializer strips request state from it. The message never
 * carries a secret, a token or a header.
 */
export class PaymentError extends Error {
  override readonly name = "PaymentError";
  constructor(
    readonly code: PaymentErrorCode,
    message: string,
    readonly details: {
      /** True when the request may have reached and changed the service. */
      ambiguous?: boolean;
      /** HTTP status, when there was a response. */
      status?: number;
      /** The service's own error code (V10 `code`, older `StatusCode`). */
      serviceCode?: string;
    } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get ambiguous(): boolean {
    return this.details.ambiguous === true;
  }
}

export function isPaymentError(e: unknown, code?: PaymentErrorCode): e is PaymentError {
  return e instanceof PaymentError && (code === undefined || e.code === code);
}
