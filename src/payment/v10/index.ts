import { Agent, type Dispatcher } from "undici";
import type { Minor } from "../../core/money.js";
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
import { PaymentError } from "../errors.js";
import { clampRetries, DEFAULT_RETRY_POLICY, type RetryPolicy } from "../retry.js";
import { correlationIdFor } from "./ids.js";
import { onboard } from "./onboarding.js";
import { DEFAULT_V10_TIMEOUTS, type V10DriverOptions } from "./options.js";
import { parseCheckin } from "./parse.js";
import {
  cancelPayment,
  capturePayment,
  findActivePayments,
  lookupPayment,
  paymentStatus,
} from "./payments.js";
import { refundPayment } from "./refunds.js";
import { type StartContext, startPayment } from "./start.js";
import { TokenSource } from "./token.js";
import { readBody, V10Transport } from "./transport.js";

export type { BeaconType, V10DriverOptions } from "./options.js";

/** The driver's transport: the token source and the API calls, one retry policy (pos-v10 §12), one dispatcher. */
function createTransport(
  options: V10DriverOptions,
  dispatcher: Dispatcher,
): { transport: V10Transport; random: () => number } {
  const merged: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retries };
  // pos-v10 §12: at most 5 retries (6 calls).
  const policy: RetryPolicy = { ...merged, max: clampRetries(merged.max) };
  const random = options.random ?? Math.random;
  const postMs = options.timeouts?.postMs ?? DEFAULT_V10_TIMEOUTS.postMs;
  const getMs = options.timeouts?.getMs ?? DEFAULT_V10_TIMEOUTS.getMs;
  const tokens = new TokenSource({
    dispatcher,
    tokenUrl: options.tokenUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    merchantVat: options.merchantVat,
    timeoutMs: postMs,
    policy,
    clock: options.clock,
    ...(options.deadlineClock === undefined ? {} : { deadlineClock: options.deadlineClock }),
    random,
  });
  const transport = new V10Transport({
    dispatcher,
    baseUrl: options.baseUrl,
    tokens,
    merchantVat: options.merchantVat,
    clientSystemName: options.clientSystemName,
    clientSystemVersion: options.clientSystemVersion,
    postTimeoutMs: postMs,
    getTimeoutMs: getMs,
    policy,
    clock: options.clock,
    ...(options.deadlineClock === undefined ? {} : { deadlineClock: options.deadlineClock }),
    random,
    logger: options.logger,
  });
  return { transport, random };
}

/**
 * The V10 REST PaymentDriver (driver.ts contract; spec pos-v10.md). One keep-alive undici Agent serves the
 * token server and the API; `close()` releases it unless the caller supplied its own dispatcher.
 */
export function createV10Driver(options: V10DriverOptions): PaymentDriver {
  const ownDispatcher = options.dispatcher === undefined;
  const dispatcher: Dispatcher =
    options.dispatcher ?? new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 30_000, connections: 8 });
  const { transport, random } = createTransport(options, dispatcher);

  let identity: PosIdentity | null = null;
  let opening: Promise<PosIdentity> | null = null;
  const ctx: StartContext = {
    transport,
    currency: options.currency,
    posId: () => {
      if (identity === null) throw new PaymentError("invalid", "V10 driver: open() has not completed");
      return identity.posId;
    },
    ownsOrder: (orderId) => options.ownsOrder(orderId),
  };

  return {
    kind: "v10",

    open(signal?: AbortSignal): Promise<PosIdentity> {
      // Concurrent opens share one onboarding, so they never create two PoSes with two keys.
      opening ??= onboard(transport, options, signal)
        .then((pos) => {
          identity = { beaconId: pos.beaconId, posId: pos.posId, name: pos.name };
          options.logger?.info({ posId: pos.posId, beaconId: pos.beaconId }, "v10 point of sale ready");
          return identity;
        })
        .finally(() => {
          opening = null;
        });
      return opening;
    },

    start: (req: StartRequest, signal?: AbortSignal): Promise<PaymentRef> => startPayment(ctx, req, signal),

    status: (ref: PaymentRef, signal?: AbortSignal): Promise<PaymentObservation> =>
      paymentStatus(ctx, ref, signal),

    lookup: (orderId: string, signal?: AbortSignal) => lookupPayment(ctx, orderId, signal),

    capture: (ref: PaymentRef, amount: Minor, signal?: AbortSignal) =>
      capturePayment(ctx, ref, amount, signal),

    cancel: (ref: PaymentRef, signal?: AbortSignal) => cancelPayment(ctx, ref, signal),

    refund: (req: RefundRequest, signal?: AbortSignal): Promise<RefundResult> =>
      refundPayment({ transport, currency: options.currency, clock: options.clock, random }, req, signal),

    async findActive(signal?: AbortSignal): Promise<PaymentObservation[]> {
      return (await findActivePayments(ctx, signal)).map((p) => p.observation);
    },

    async checkin(signal?: AbortSignal): Promise<CheckinObservation> {
      const posId = ctx.posId();
      const r = await transport.call(
        {
          op: "checkin",
          method: "GET",
          path: `/v10/pointofsales/${encodeURIComponent(posId)}/checkin`,
          correlationId: correlationIdFor(`checkin:${posId}`),
        },
        signal,
      );
      return readBody("checkin", r, false, parseCheckin);
    },

    async close(): Promise<void> {
      if (ownDispatcher) await dispatcher.close();
    },
  };
}
