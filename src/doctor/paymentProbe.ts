/**
 * The doctor's two read-only requests to the payment service, through the drivers' own transports and
 * signing: one V10 client-credentials token (pos-v10 §2), or the older interface's ReadPoSAssignPoSUnitId
 * (pos-legacy §3, §5.1). Nothing is created or changed at the service.
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
