import { Agent, type Dispatcher } from "undici";
import type {
  CheckinObservation,
  PaymentDriver,
  PaymentObservation,
  PaymentRef,
  PosIdentity,
  RefundRequest,
  RefundResult,
  StartRequest,
} from "../driver.js";
import { isPaymentError, PaymentError } from "../errors.js";
import { DEFAULT_RETRY_POLICY } from "../retry.js";
import { type LegacyContext, partialAllowed, posKey, statusBody } from "./context.js";
import {
  checkOptions,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type LegacyDriverOptions,
  POLL_DELAY_MS,
} from "./options.js";
import { ACTIVE_STATUSES, integer, observation, statusOf, text } from "./read.js";
import { refund } from "./refund.js";
import { cancel, capture } from "./settle.js";
import { merchantKeyBytes, SigningError } from "./signing.js";
import { startPayment } from "./start.js";
import { LegacyTransport } from "./transport.js";

export type { LegacyDriverOptions };

/** Creates the driver for `payment.driver: legacy`; throws LegacyOptionsError for unusable options. */
export function createLegacyDriver(options: LegacyDriverOptions): PaymentDriver {
  return new LegacyDriver(options);
}

/**
 * PaymentDriver over the older operation-based interface (seed "Older interface", pos-legacy.md).
 * Every request is signed (§3); PaymentStart carries the HMAC (§4); there are no idempotency keys, so
 * after a lost answer the driver queries status before it repeats anything (§11).
 */
export class LegacyDriver implements PaymentDriver {
  readonly kind = "legacy" as const;
  private readonly c: LegacyContext;
  private readonly ownedDispatcher: Agent | null;

  constructor(o: LegacyDriverOptions) {
    checkOptions(o);
    let merchantKey: Buffer;
    try {
      merchantKey = merchantKeyBytes(o.merchantKey);
    } catch (e) {
      // The cause is kept; SigningError messages name the field, never its value.
      if (e instanceof SigningError)
        throw new PaymentError("invalid", "legacy driver: merchantKey is not ISO-8859-1", {}, { cause: e });
      throw e;
    }
    let dispatcher: Dispatcher;
    if (o.dispatcher) {
      dispatcher = o.dispatcher;
      this.ownedDispatcher = null;
    } else {
      const agent = new Agent({ keepAliveTimeout: 10_000 });
      dispatcher = agent;
      this.ownedDispatcher = agent;
    }
    const t = new LegacyTransport({
      dispatcher,
      baseUrl: o.baseUrl,
      apiVersion: o.apiVersion,
      apiKey: o.apiKey,
      clock: o.clock,
      ...(o.deadlineClock === undefined ? {} : { deadlineClock: o.deadlineClock }),
      timeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      logger: o.logger,
    });
    const backoff = {
      baseDelayMs: o.backoff?.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: o.backoff?.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    };
    const random = o.random ?? Math.random;
    this.c = { t, o, merchantKey, captureTypes: new Map(), backoff, random, log: o.logger };
  }

  /**
   * pos-legacy §9: RegisterPoS when missing (a 10 "not unique" or a lost answer is resolved by reading it
   * back), the name kept current, AssignPoSUnitIdToPos when the assigned unit differs.
   */
  async open(signal?: AbortSignal): Promise<PosIdentity> {
    const { o, t } = this.c;
    const key = posKey(this.c);
    let unit = await this.readUnit(signal);
    if (unit === null) {
      let refused: PaymentError | null = null;
      try {
        await t.call(
          "RegisterPoS",
          { MerchantId: o.merchantId, LocationId: o.locationId, PoSId: o.posId, Name: o.posName },
          signal,
        );
      } catch (e) {
        if (!(e instanceof PaymentError) || !(e.code === "invalid" || e.ambiguous)) throw e;
        refused = e;
      }
      unit = await this.readUnit(signal);
      if (unit === null) {
        const cause = refused === null ? undefined : { cause: refused };
        throw new PaymentError("notFound", "open: the PoS could not be registered", {}, cause);
      }
    } else {
      await t.call("UpdateRegisteredPoSName", { ...key, Name: o.posName }, signal);
    }
    if (unit !== o.posUnitId)
      await t.call("AssignPoSUnitIdToPos", { ...key, PoSUnitId: o.posUnitId }, signal);
    return { beaconId: o.posUnitId, posId: o.posId, name: o.posName };
  }

  /** The PoS's assigned PoSUnitId (`""` for none), or null when the PoS is not registered (30). */
  private async readUnit(signal?: AbortSignal): Promise<string | null> {
    try {
      const body = await this.c.t.call("ReadPoSAssignPoSUnitId", posKey(this.c), signal);
      return text(body, "PoSUnitId", "ReadPoSAssignPoSUnitId") ?? "";
    } catch (e) {
      if (isPaymentError(e, "notFound")) return null;
      throw e;
    }
  }

  start(req: StartRequest, signal?: AbortSignal): Promise<PaymentRef> {
    return startPayment(this.c, req, signal);
  }

  /** GetPaymentStatus / GetReservationStatus; poll every 1 s (seed "Limits"). */
  async status(ref: PaymentRef, signal?: AbortSignal): Promise<PaymentObservation> {
    const op = ref.mode === "payment" ? "GetPaymentStatus" : "GetReservationStatus";
    return observation(ref, await statusBody(this.c, ref, signal), op, partialAllowed(this.c, ref));
  }

  /** Reservation first (the default mode), then direct payment; status 10 in both → null. */
  async lookup(orderId: string, signal?: AbortSignal): Promise<PaymentObservation | null> {
    for (const mode of ["reservation", "payment"] as const) {
      const ref = this.knownRef(orderId, mode);
      const op = mode === "payment" ? "GetPaymentStatus" : "GetReservationStatus";
      const body = await statusBody(this.c, ref, signal);
      if (statusOf(body, op) !== 10) return observation(ref, body, op, partialAllowed(this.c, ref));
    }
    return null;
  }

  capture(ref: PaymentRef, amount: number, signal?: AbortSignal): Promise<void> {
    return capture(this.c, ref, amount, signal);
  }

  cancel(ref: PaymentRef, signal?: AbortSignal): Promise<void> {
    return cancel(this.c, ref, signal);
  }

  refund(req: RefundRequest, signal?: AbortSignal): Promise<RefundResult> {
    return refund(this.c, req, signal);
  }

  /**
   * GetCurrentPayment (active entity) and GetCurrentReservation (active or Done). A Done reservation stays
   * "current" until the next start and no status shows "captured", so the caller checks its journal.
   */
  async findActive(signal?: AbortSignal): Promise<PaymentObservation[]> {
    const out: PaymentObservation[] = [];
    const reads = [
      ["payment", "GetCurrentPayment"],
      ["reservation", "GetCurrentReservation"],
    ] as const;
    for (const [mode, op] of reads) {
      const body = await this.c.t.call(op, posKey(this.c), signal);
      const status = integer(body, "PaymentStatus", op);
      const orderId = text(body, "OrderId", op);
      if (status === null || orderId === null) continue;
      if (!ACTIVE_STATUSES.has(status) && !(mode === "reservation" && status === 100)) continue;
      const ref = this.knownRef(orderId, mode);
      out.push(observation(ref, body, op, partialAllowed(this.c, ref)));
    }
    return out;
  }

  /** A ref for an order found at the service, with the CaptureType this driver started it with, if known. */
  private knownRef(orderId: string, mode: PaymentRef["mode"]): PaymentRef {
    const captureType = mode === "reservation" ? this.c.captureTypes.get(orderId) : undefined;
    return { id: orderId, orderId, mode, ...(captureType === undefined ? {} : { captureType }) };
  }

  /**
   * The older interface has no check-in query (seed: the operations table has none): a start made before
   * the customer checks in waits in AwaitCheckIn (30) and moves to Issued (20) on check-in, so presence is
   * seen through `status()`. This always reports "not checked in" at the seed's 1 s poll rate.
   */
  async checkin(): Promise<CheckinObservation> {
    return { checkedIn: false, pollDelayMs: POLL_DELAY_MS };
  }

  async close(): Promise<void> {
    await this.ownedDispatcher?.close();
  }
}
