/**
 * The payment-service check: proves the credentials work without creating or changing anything at the
 * service. V10: one client-credentials token (pos-v10 §2). Older interface: one signed read-only request,
 * ReadPoSAssignPoSUnitId (pos-legacy §3, §5.1). The requests themselves are in paymentProbe.ts.
 */
import type { Secrets, VenddConfig } from "../config/load.js";
import { isPaymentError } from "../payment/errors.js";
import type { DoctorDeps } from "./deps.js";
import { type Check, type CheckOutcome, messageOf } from "./run.js";

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
