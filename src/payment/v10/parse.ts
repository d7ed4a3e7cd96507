import { amountFromJson, type Minor, MoneyFormatError } from "../../core/money.js";
import type { PaymentObservation, PaymentRef } from "../driver.js";

/**
 * Guards for V10 response bodies (pos-v10 §5). Bodies arrive as `unknown`; a guard returns the typed value
 * or throws `MalformedBody`, which the transport turns into a PaymentError. Unknown fields are ignored
 * (pos-v10 §1).
 */
export class MalformedBody extends Error {
  override readonly name = "MalformedBody";
}

export type Json = Record<string, unknown>;

export function record(body: unknown, what: string): Json {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new MalformedBody(`${what}: not an object`);
  }
  return body as Json;
}

export function str(o: Json, key: string): string {
  const v = o[key];
  if (typeof v !== "string" || v === "") throw new MalformedBody(`${key}: not a string`);
  return v;
}

function int(o: Json, key: string): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
    throw new MalformedBody(`${key}: not an integer`);
  return v;
}

export function bool(o: Json, key: string): boolean {
  const v = o[key];
  if (typeof v !== "boolean") throw new MalformedBody(`${key}: not a boolean`);
  return v;
}

function amount(o: Json, key: string): Minor | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  try {
    return amountFromJson(v);
  } catch (e) {
    if (e instanceof MoneyFormatError) throw new MalformedBody(`${key}: not an amount`);
    throw e;
  }
}

/** `{ <key>: [string] }` id lists (paymentIds, posIds, storeIds, refundIds). */
export function idList(body: unknown, key: string): string[] {
  const v = record(body, key)[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
    throw new MalformedBody(`${key}: not a list`);
  return v as string[];
}

/** pos-v10 §6-§7 payment status → driver.ts PaymentState. */
const PAYMENT_STATES: Readonly<Record<string, Pick<PaymentObservation, "state" | "cancelReason">>> = {
  Initiated: { state: "pending" },
  Prepared: { state: "pending" },
  IssuedToUser: { state: "issued" },
  Paired: { state: "issued" },
  Reserved: { state: "reserved" },
  Captured: { state: "captured" },
  CancelledByUser: { state: "cancelled", cancelReason: "user" },
  CancelledByClient: { state: "cancelled", cancelReason: "client" },
  CancelledByService: { state: "cancelled", cancelReason: "service" },
  ExpiredAndCancelled: { state: "expired" },
};

/** Payment statuses that block a new payment on the PoS (pos-v10 §7, 1301). */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set([
  "Prepared",
  "Paired",
  "Initiated",
  "IssuedToUser",
]);

/** A parsed `QueryPaymentResponse` with its raw status kept for the 409 re-queries. */
export interface V10Payment {
  status: string;
  observation: PaymentObservation;
}

/** Parses `QueryPaymentResponse`. */
export function parsePayment(body: unknown): V10Payment {
  const o = record(body, "payment");
  const status = str(o, "status");
  const mapped = PAYMENT_STATES[status];
  if (!mapped) throw new MalformedBody(`status: unknown value`);
  const ref: PaymentRef = { id: str(o, "paymentId"), orderId: str(o, "orderId"), mode: "reservation" };
  const pcp = o.partialCapturePossible;
  const observation: PaymentObservation = {
    ref,
    state: mapped.state,
    amount: amount(o, "amount"),
    partialCapturePossible: typeof pcp === "boolean" ? pcp : null,
    pollDelayMs: int(o, "pollDelayInMs"),
  };
  if (mapped.cancelReason) observation.cancelReason = mapped.cancelReason;
  return { status, observation };
}

/** `GetRefundResponse` (pos-v10 §5). */
export interface V10Refund {
  refundId: string;
  status: string;
  amount: Minor | null;
  pollDelayMs: number;
}

export function parseRefund(body: unknown): V10Refund {
  const o = record(body, "refund");
  return {
    refundId: str(o, "refundId"),
    status: str(o, "status"),
    amount: amount(o, "amount"),
    pollDelayMs: int(o, "pollDelayInMs"),
  };
}

/** `PosResponse` fields the driver compares (pos-v10 §5). */
export interface V10Pos {
  posId: string;
  storeId: string;
  name: string;
  beaconId: string;
  supportedBeaconTypes: string[];
  requirePaymentBeforeCheckin: boolean;
}

export function parsePos(body: unknown): V10Pos {
  const o = record(body, "pos");
  const types = o.supportedBeaconTypes;
  return {
    posId: str(o, "posId"),
    storeId: str(o, "storeId"),
    name: str(o, "name"),
    beaconId: str(o, "beaconId"),
    supportedBeaconTypes: Array.isArray(types) ? types.filter((t): t is string => typeof t === "string") : [],
    requirePaymentBeforeCheckin: o.requirePaymentBeforeCheckin === true,
  };
}

/** `GetCheckInResponse`: only what the engine needs. */
export function parseCheckin(body: unknown): { checkedIn: boolean; pollDelayMs: number } {
  const o = record(body, "checkin");
  return { checkedIn: bool(o, "isUserCheckedIn"), pollDelayMs: int(o, "pollDelayInMs") };
}

/** The token endpoint's answer (pos-v10 §2). */
export function parseToken(body: unknown): { accessToken: string; expiresInS: number } {
  const o = record(body, "token");
  return { accessToken: str(o, "access_token"), expiresInS: int(o, "expires_in") };
}
