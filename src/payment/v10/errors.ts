import { PaymentError, type PaymentErrorCode } from "../errors.js";

/**
 * The one place where V10 answers and transport failures become `PaymentError`s (style habit 6). Callers
 * branch on `code` and `ambiguous`, never on the message, which never carries a secret or a token.
 */

/**
 * What went wrong with one V10 call. `cause` is the exception behind a transport failure (undici's error),
 * kept as the PaymentError's `cause` for logs; `detail` is what the message says (an error code, never a
 * header or a body).
 */
export type V10Failure =
  /** The request never left (connection refused, DNS): certainly not applied. */
  | { kind: "notSent"; detail: string; cause?: unknown }
  /** Reset, socket closed, lost response or an abort after sending: maybe applied. */
  | { kind: "network"; detail: string; cause?: unknown }
  /** No (complete) answer within the timeout: maybe applied. */
  | { kind: "timeout"; detail: string; cause?: unknown }
  /** An HTTP answer that is not a success. `code` is the service's `code` ("" counts as none, pos-v10 §5). */
  | { kind: "status"; status: number; code: string | undefined }
  /** A 2xx answer whose body is not what pos-v10 §5 promises. */
  | { kind: "malformed"; status: number; detail: string; mutating: boolean; cause?: unknown };

/** pos-v10 §11: 409 codes and the engine's meaning of each. */
const CONFLICT_CODES: Readonly<Record<string, PaymentErrorCode>> = {
  "1000": "notFound", // PoS not found (initiate, prepare)
  "1001": "notFound", // payment not found (create refund)
  "1002": "notFound", // store not found (create PoS)
  "1200": "conflict", // merchantPosId exists
  "1202": "conflict", // beaconId used by another active PoS
  "1204": "conflict", // store not activated
  "1300": "conflict", // cannot cancel in this state
  "1301": "busy", // another payment active on the PoS
  "1303": "conflict", // ready on a payment that is not prepared
  "1304": "conflict", // capture of a payment that is not reserved
  "1305": "invalid", // capture above the reserved amount: our request is wrong
  "1306": "idempotencyMismatch",
  "1307": "conflict", // already captured with another amount
  "1308": "partialCaptureNotPossible",
  "1351": "conflict", // refund not reserved
  "1352": "conflict", // refund cannot be cancelled
  "1354": "refundRefused", // payment not captured
  "1365": "refundRefused", // currency differs
  "1366": "refundRefused", // payment too old
  "1367": "refundRefused", // amount too high
  "1368": "refundRefused", // store balance too low
};

/**
 * Maps a failure of operation `op` (e.g. `"capture"`, for the message only) to a PaymentError.
 * `ambiguous` is true exactly when the request may have reached and changed the service: network errors
 * and timeouts after sending, 5xx (reliability.md §2.3), a malformed answer to a mutating call.
 */
export function toPaymentError(op: string, f: V10Failure): PaymentError {
  switch (f.kind) {
    case "notSent":
      return new PaymentError(
        "unavailable",
        `${op}: not sent (${f.detail})`,
        { ambiguous: false },
        causeOf(f),
      );
    case "network":
      return new PaymentError(
        "unavailable",
        `${op}: connection failed (${f.detail})`,
        { ambiguous: true },
        causeOf(f),
      );
    case "timeout":
      return new PaymentError(
        "unavailable",
        `${op}: timed out (${f.detail})`,
        { ambiguous: true },
        causeOf(f),
      );
    case "malformed":
      return new PaymentError(
        "unavailable",
        `${op}: unexpected answer (${f.detail})`,
        { status: f.status, ambiguous: f.mutating },
        causeOf(f),
      );
    case "status":
      return statusError(op, f.status, f.code);
  }
}

/** The ES2022 `{ cause }` option of a failure that has one. */
function causeOf(f: { cause?: unknown }): { cause: unknown } | undefined {
  return f.cause === undefined ? undefined : { cause: f.cause };
}

function statusError(op: string, status: number, code: string | undefined): PaymentError {
  const details = code === undefined ? { status } : { status, serviceCode: code };
  const label = code === undefined ? `HTTP ${status}` : `HTTP ${status} code ${code}`;
  const mk = (c: PaymentErrorCode, ambiguous = false) =>
    new PaymentError(c, `${op}: ${label}`, ambiguous ? { ...details, ambiguous } : details);
  // pos-v10 §11: 2000–2999 and any 5xx are internal errors that may follow an applied request.
  if (status >= 500) return mk("unavailable", true);
  if (status === 401) return mk("unauthorized");
  if (status === 403) return mk("forbidden");
  if (status === 404) return mk("notFound");
  if (status === 409) return mk((code !== undefined && CONFLICT_CODES[code]) || "conflict");
  return mk("invalid");
}

/** Reads `code` from an ErrorResponse body (pos-v10 §5); `""`, null and non-strings count as absent. */
export function errorCodeOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const code = (body as { code?: unknown }).code;
  if (typeof code === "string" && code !== "") return code;
  if (typeof code === "number" && Number.isInteger(code)) return String(code);
  return undefined;
}

/** Error codes of undici and Node that mean the request was never written to a socket. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const TIMEOUT_CODES: ReadonlySet<string> = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** Classifies an exception thrown by undici's `request` (or while reading its body). */
export function classifyTransportError(err: unknown): V10Failure {
  const code = errCode(err) ?? errCode((err as { cause?: unknown } | null)?.cause);
  const detail = code ?? (err instanceof Error ? err.name : "unknown error");
  if (code !== undefined && NOT_SENT_CODES.has(code)) return { kind: "notSent", detail, cause: err };
  if (code !== undefined && TIMEOUT_CODES.has(code)) return { kind: "timeout", detail, cause: err };
  return { kind: "network", detail, cause: err };
}

function errCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
