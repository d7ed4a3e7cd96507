import { amountFromJson, type Minor, MoneyFormatError } from "../../core/money.js";
import type { PaymentObservation, PaymentRef, PaymentState } from "../driver.js";
import { PaymentError } from "../errors.js";
import { POLL_DELAY_MS } from "./options.js";
import type { LegacyBody } from "./transport.js";

/** Reading older-interface answers: `unknown` values guarded, field names case-insensitive (pos-legacy §2). */

function malformed(op: string, what: string): PaymentError {
  return new PaymentError("invalid", `${op}: answer has ${what}`);
}

/** A string field, or null when absent or null. */
export function text(body: LegacyBody, name: string, op: string): string | null {
  const v = body.get(name.toLowerCase());
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw malformed(op, `a non-string ${name}`);
  return v;
}

/** An integer field, or null when absent or null. */
export function integer(body: LegacyBody, name: string, op: string): number | null {
  const v = body.get(name.toLowerCase());
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v)) throw malformed(op, `a non-integer ${name}`);
  return v;
}

/** An amount (a JSON number in responses, seed "Amount"), in minor units; null when absent. */
export function amount(body: LegacyBody, name: string, op: string): Minor | null {
  const v = body.get(name.toLowerCase());
  if (v === undefined || v === null) return null;
  try {
    return amountFromJson(v);
  } catch (e) {
    if (e instanceof MoneyFormatError) throw malformed(op, `an invalid ${name}`);
    throw e;
  }
}

/**
 * The status of a payment or reservation answer. GetReservationStatus names it `ReservationStatus` in the
 * real example and `PaymentStatus` in its field table: accept either (pos-legacy §5.3).
 */
export function statusOf(body: LegacyBody, op: string): number {
  const s = integer(body, "ReservationStatus", op) ?? integer(body, "PaymentStatus", op);
  if (s === null) throw malformed(op, "no status");
  return s;
}

/**
 * Seed status values → engine states: 10/30 pending, 20/60/80 issued, 100 reserved (reservation) or paid
 * (payment), 40 cancelled by the user, 50 failed. 0 and 70 were seen in one public client (pos-legacy §6):
 * 0 reads as pending, 70 as issued.
 */
export function stateOf(status: number, mode: PaymentRef["mode"], op: string): PaymentState {
  switch (status) {
    case 0:
    case 10:
    case 30:
      return "pending";
    case 20:
    case 60:
    case 70:
    case 80:
      return "issued";
    case 100:
      return mode === "reservation" ? "reserved" : "paid";
    case 40:
      return "cancelled";
    case 50:
      return "failed";
    default:
      throw malformed(op, `an unknown status ${status}`);
  }
}

/** An observation from a status answer; `partial` is the reservation's CaptureType when known. */
export function observation(
  ref: PaymentRef,
  body: LegacyBody,
  op: string,
  partial: boolean | null,
): PaymentObservation {
  const state = stateOf(statusOf(body, op), ref.mode, op);
  return {
    ref,
    state,
    ...(state === "cancelled" ? { cancelReason: "user" as const } : {}),
    amount: amount(body, "Amount", op),
    partialCapturePossible: state === "reserved" ? partial : null,
    pollDelayMs: POLL_DELAY_MS,
  };
}

/** Statuses of an entity that still blocks its PoS (seed: "active payment entity"). */
export const ACTIVE_STATUSES: ReadonlySet<number> = new Set([20, 30, 60, 70, 80]);
