/**
 * The payment-service check: proves the credentials work without creating or changing anything at the
 * service. V10: one client-credentials token (pos-v10 §2). Older interface: one signed read-only request,
 * ReadPoSAssignPoSUnitId (pos-legacy §3, §5.1). Both go through the drivers' own transports and signing.
 */
import { randomInt } from "node:crypto";
import type { Logger } from "pino";
import { Agent } from "undici";
import type { Secrets, VenddConfig } from "../config/load.js";
import { paymentOptions } from "../config/seams.js";
import type { Clock } from "../core/clock.js";
import { isPaymentError } from "../payment/errors.js";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../payment/legacy/options.js";
import { LegacyTransport } from "../payment/legacy/transport.js";
import { TokenSource } from "../payment/v10/token.js";
import type { DoctorDeps } from "./deps.js";
import { type Check, type CheckOutcome, messageOf } from "./run.js";

/** No retries: the doctor reports what one attempt gives. */
const ONE_ATTEMPT = { max: 0, baseDelayMs: 0, maxDelayMs: 0 };

/** Fetches one V10 token (discarded at once). Rejects with a PaymentError; never exposes the secret. */
export async function fetchServiceToken(
  config: VenddConfig,
  secrets: Secrets,
  deps: { clock: Clock; signal: AbortSignal },
): Promise<void> {
  const v10 = paymentOptions(config, secrets);
  if (v10.kind !== "v10") throw new Error("payment.driver is not v10");
  const dispatcher = new Agent({ connections: 1 });
  try {
    const tokens = new TokenSource({
      dispatcher,
      tokenUrl: v10.tokenUrl,
      clientId: v10.clientId,
      clientSecret: v10.clientSecret,
      merchantVat: v10.merchantVat,
      // 2000 ms when unset: the driver's own default (pos-v10 §12).
      timeoutMs: v10.timeouts?.postMs ?? 2000,
      policy: ONE_ATTEMPT,
      clock: deps.clock,
      random: () => randomInt(1_000_000) / 1_000_000,
    });
    await tokens.get(deps.signal);
  } finally {
    await dispatcher.close();
  }
}

/** ReadPoSAssignPoSUnitId for the configured PoS: its PoSUnitId (`""` when none), null when unregistered. */
export async function readAssignedPosUnit(
  config: VenddConfig,
  secrets: Secrets,
  deps: { clock: Clock; logger: Logger; signal: AbortSignal },
): Promise<string | null> {
  const legacy = paymentOptions(config, secrets);
  if (legacy.kind !== "legacy") throw new Error("payment.driver is not legacy");
  const dispatcher = new Agent({ connections: 1 });
  try {
    const transport = new LegacyTransport({
      dispatcher,
      baseUrl: legacy.baseUrl,
      apiVersion: legacy.apiVersion,
      apiKey: legacy.apiKey,
      clock: deps.clock,
      timeoutMs: legacy.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      logger: deps.logger,
    });
    const fields = { MerchantId: legacy.merchantId, LocationId: legacy.locationId, PoSId: legacy.posId };
    try {
      const body = await transport.call("ReadPoSAssignPoSUnitId", fields, deps.signal);
      const unit = body.get("posunitid");
      return typeof unit === "string" ? unit : "";
    } catch (err) {
      if (isPaymentError(err, "notFound")) return null;
      throw err;
    }
  } finally {
    await dispatcher.close();
  }
}

/** The payment check for the configured driver. */
export function paymentCheck(config: VenddConfig, secrets: Secrets, deps: DoctorDeps): Check {
  const p = config.payment;
  if (p.driver === "legacy" && p.legacy !== undefined) {
    const legacy = p.legacy;
    const host = new URL(legacy.baseUrl).host;
    return {
      name: "payment",
      timeoutMs: legacy.requestTimeoutMs + 2000,
      timeoutHint: `no answer from ${host}: check the network and payment.legacy.baseUrl`,
      async run(signal) {
        try {
          const unit = await deps.readPosUnit(config, secrets, signal);
          if (unit === null) {
            return ok(
              `signed request accepted by ${host}; PoS not registered yet (vendd registers it at start)`,
            );
          }
          return ok(`signed request accepted by ${host}; PoSUnitId ${unit === "" ? "not assigned" : unit}`);
        } catch (err) {
          return fail(failure(err, host, "payment.legacy.baseUrl", "secrets.legacy.apiKey and the clock"));
        }
      },
    };
  }
  const v10 = p.v10;
  if (v10 === undefined) return { ...skipped("payment", "no payment section for the configured driver") };
  const host = new URL(v10.tokenUrl).host;
  return {
    name: "payment",
    timeoutMs: v10.timeouts.postMs + 2000,
    timeoutHint: `no answer from ${host}: check the network, DNS and payment.v10.tokenUrl`,
    async run(signal) {
      try {
        await deps.fetchToken(config, secrets, signal);
        return ok(`token endpoint ${host} issued a token for client ${v10.clientId}`);
      } catch (err) {
        return fail(
          failure(
            err,
            host,
            "payment.v10.tokenUrl",
            "payment.v10.clientId, payment.v10.merchantVat and the client secret",
          ),
        );
      }
    },
  };
}

function failure(err: unknown, host: string, urlKey: string, credentials: string): string {
  if (isPaymentError(err, "unauthorized")) {
    return `${host} refused the credentials (${messageOf(err)}): check ${credentials}`;
  }
  if (isPaymentError(err, "unavailable") && (err.details.status ?? 0) >= 500) {
    return `${host} answers with a server error (${messageOf(err)}): the payment service has a problem; vendd run stays out of service and retries by itself`;
  }
  if (isPaymentError(err, "unavailable")) {
    return `no answer from ${host} (${messageOf(err)}): check the network, DNS and ${urlKey}`;
  }
  return `${host}: ${messageOf(err)}: check ${urlKey} and ${credentials}`;
}

function ok(detail: string): CheckOutcome {
  return { status: "ok", detail };
}

function fail(detail: string): CheckOutcome {
  return { status: "fail", detail };
}

/** A check that only reports a skip. */
export function skipped(name: string, detail: string): Check {
  return { name, timeoutMs: 1000, timeoutHint: "", run: async () => ({ status: "skip", detail }) };
}
