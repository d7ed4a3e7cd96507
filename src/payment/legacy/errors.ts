import { PaymentError, type PaymentErrorCode } from "../errors.js";

/**
 * How one older-interface call failed. `lost`: sent, no readable answer (timeout, reset, 5xx, unreadable
 * 200): it may have been applied. `notSent`: refused before any byte reached the service. `cause`: the
 * exception behind it (undici's error), kept as the PaymentError's `cause`; never part of the message.
 */
export type LegacyFailure =
  | { kind: "refused"; status: 400; statusCode: number; statusText: string }
  | { kind: "status"; status: number }
  | { kind: "lost"; detail: string; status?: number; cause?: unknown }
  | { kind: "notSent"; detail: string; cause?: unknown };

/** Operations whose StatusCode 50 means "another entity is in progress on the PoS" (pos-legacy §10). */
const STARTS: ReadonlySet<string> = new Set(["PaymentStart", "ReservationStart"]);

/**
 * THE mapping from an older-interface failure to a PaymentError (seed "Errors", pos-legacy §5):
 * 10 → invalid; 20, 30 → notFound; 40 → conflict; 50 → busy on a start, refundRefused on a refund,
 * conflict elsewhere; 1, 2, 3, 99 → refundRefused; 401 → unauthorized; lost → unavailable (ambiguous).
 * The service's StatusText carries no secret and is kept in the message.
 */
export function toPaymentError(op: string, f: LegacyFailure): PaymentError {
  switch (f.kind) {
    case "refused": {
      const code = codeOf(op, f.statusCode);
      const details = { status: 400, serviceCode: String(f.statusCode) };
      return new PaymentError(code, `${op}: StatusCode ${f.statusCode} ${f.statusText}`.trim(), details);
    }
    case "status":
      if (f.status === 401)
        return new PaymentError("unauthorized", `${op}: request signature refused (401)`, { status: 401 });
      return new PaymentError("invalid", `${op}: unexpected HTTP ${f.status}`, { status: f.status });
    case "lost":
      return new PaymentError(
        "unavailable",
        `${op}: ${f.detail}`,
        { ambiguous: true, status: f.status },
        f.cause === undefined ? undefined : { cause: f.cause },
      );
    case "notSent":
      return new PaymentError(
        "unavailable",
        `${op}: not sent (${f.detail})`,
        { ambiguous: false },
        f.cause === undefined ? undefined : { cause: f.cause },
      );
  }
}

function codeOf(op: string, statusCode: number): PaymentErrorCode {
  switch (statusCode) {
    case 10:
      return "invalid";
    case 20:
    case 30:
      return "notFound";
    case 40:
      return "conflict";
    case 50:
      if (STARTS.has(op)) return "busy";
      return op === "PaymentRefund" ? "refundRefused" : "conflict";
    case 1:
    case 2:
    case 3:
    case 99:
      return "refundRefused";
    default:
      return "invalid";
  }
}

/** The service's StatusCode of a PaymentError from this driver, if it has one. */
export function serviceCode(e: PaymentError): number | null {
  const c = e.details.serviceCode;
  return c === undefined ? null : Number(c);
}
