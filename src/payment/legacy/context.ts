import type { Logger } from "pino";
import { LIMITS } from "../budget.js";
import type { PaymentRef } from "../driver.js";
import type { PaymentError } from "../errors.js";
import { type Backoff, decideRepeat } from "../retry.js";
import type { LegacyDriverOptions } from "./options.js";
import { statusOf } from "./read.js";
import type { LegacyBody, LegacyTransport } from "./transport.js";

/** What the driver's flows share: the transport, the options and the reservations' capture types. */
export interface LegacyContext {
  readonly t: LegacyTransport;
  readonly o: LegacyDriverOptions;
  /** ISO-8859-1 bytes of the MerchantKey (seed "HMAC of PaymentStart"). */
  readonly merchantKey: Buffer;
  /**
   * CaptureType per reservation OrderId, as started by this process. The interface has no way to read it
   * back, so after a restart the configured default applies.
   */
  readonly captureTypes: Map<string, "full" | "partial">;
  /** Backoff and jitter of the one repeat after a lost answer. */
  readonly backoff: Backoff;
  readonly random: () => number;
  readonly log?: Logger;
}

/**
 * After attempt `attempt` of a mutation ended without an answer (`lost`) and the flow found a repeat safe:
 * asks retry.ts whether the budget allows another send (`LIMITS.legacySends`) and waits its jittered
 * backoff. False when the budget is spent. An abort during the wait throws `lost` (still ambiguous).
 */
export async function waitToRepeat(
  c: LegacyContext,
  attempt: number,
  lost: PaymentError,
  signal?: AbortSignal,
): Promise<boolean> {
  const d = decideRepeat({ attempt, limit: LIMITS.legacySends }, c.backoff, c.random);
  if (!d.retry) return false;
  try {
    await c.o.clock.sleep(d.delayMs, signal);
  } catch {
    throw lost;
  }
  return true;
}

/** MerchantId, LocationId and PoSId: the key of most operations. */
export function posKey(c: LegacyContext): { MerchantId: string; LocationId: string; PoSId: string } {
  return { MerchantId: c.o.merchantId, LocationId: c.o.locationId, PoSId: c.o.posId };
}

/** GetPaymentStatus or GetReservationStatus of one order (status 10 = nothing exists, pos-legacy §6). */
export async function statusBody(
  c: LegacyContext,
  ref: PaymentRef,
  signal?: AbortSignal,
): Promise<LegacyBody> {
  const op = ref.mode === "payment" ? "GetPaymentStatus" : "GetReservationStatus";
  return c.t.call(op, { ...posKey(c), OrderId: ref.orderId }, signal);
}

/** The seed status number of one order. */
export async function queryStatus(c: LegacyContext, ref: PaymentRef, signal?: AbortSignal): Promise<number> {
  const op = ref.mode === "payment" ? "GetPaymentStatus" : "GetReservationStatus";
  return statusOf(await statusBody(c, ref, signal), op);
}

/** How many reservations' capture types are remembered (oldest forgotten first; bounded memory). */
export const CAPTURE_TYPES_KEPT = 1000;

/** Remembers a reservation's CaptureType for its capture (bounded, insertion order). */
export function rememberCaptureType(c: LegacyContext, orderId: string, type: "full" | "partial"): void {
  c.captureTypes.delete(orderId);
  c.captureTypes.set(orderId, type);
  for (const oldest of c.captureTypes.keys()) {
    if (c.captureTypes.size <= CAPTURE_TYPES_KEPT) break;
    c.captureTypes.delete(oldest);
  }
}

/**
 * Whether partial capture is possible for a reservation: the CaptureType its ref carries (durable, from
 * the journal), else the one remembered since start, else the configured default.
 */
export function partialAllowed(
  c: LegacyContext,
  ref: { orderId: string; captureType?: "full" | "partial" },
): boolean {
  return (ref.captureType ?? c.captureTypes.get(ref.orderId) ?? c.o.captureType) === "partial";
}
