import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Secrets, VenddConfig } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import type { PaymentDriver } from "./driver.js";

export interface PaymentFactoryDeps {
  clock: Clock;
  logger: Logger;
  /** The journal's answer to "is this order a live session of ours?" (1301 / busy-PoS recovery). */
  ownsOrder(orderId: string): boolean;
  /** Jitter source in [0, 1) for retry backoff (default Math.random); seeded in repeatable fault runs. */
  random?: () => number;
}

export class PaymentConfigError extends Error {
  override readonly name = "PaymentConfigError";
}

/**
 * Creates the payment driver named by `payment.driver`. Each implementation is imported only in its own
 * case. The configuration has been validated, so a missing section here is a programming error.
 */
export async function createPaymentDriver(
  config: VenddConfig,
  secrets: Secrets,
  deps: PaymentFactoryDeps,
): Promise<PaymentDriver> {
  const logger = deps.logger.child({ component: "payment" });
  const driver = config.payment.driver;
  switch (driver) {
    case "v10": {
      const v10 = config.payment.v10;
      const clientSecret = secrets.v10?.clientSecret;
      if (v10 === undefined || clientSecret === undefined) {
        throw new PaymentConfigError(
          "payment.v10 and secrets.v10.clientSecret are required for the v10 driver",
        );
      }
      const { createV10Driver } = await import("./v10/index.js");
      return createV10Driver({
        baseUrl: v10.baseUrl,
        tokenUrl: v10.tokenUrl,
        clientId: v10.clientId,
        clientSecret,
        merchantVat: v10.merchantVat,
        clientSystemName: v10.clientSystemName,
        clientSystemVersion: v10.clientSystemVersion,
        storeId: v10.storeId,
        merchantBrandId: v10.merchantBrandId,
        merchantLocationId: v10.merchantLocationId,
        merchantPosId: v10.merchantPosId ?? config.unit.id,
        posName: config.unit.name,
        beaconId: v10.beaconId,
        supportedBeaconTypes: [...v10.supportedBeaconTypes],
        // A self-service unit pairs a check-in only with a payment that exists (pos-v10 §10), so a customer
        // who checked in and walked away is never paired with the next customer's payment.
        requirePaymentBeforeCheckin: config.engine.flow === "selection" || v10.checkin === "idlePayment",
        currency: config.currency,
        timeouts: v10.timeouts,
        retries: v10.retries,
        clock: deps.clock,
        ...(deps.random === undefined ? {} : { random: deps.random }),
        logger,
        ownsOrder: deps.ownsOrder,
        newKey: randomUUID,
      });
    }
    case "legacy": {
      const legacy = config.payment.legacy;
      const keys = secrets.legacy;
      if (legacy === undefined || keys === undefined) {
        throw new PaymentConfigError("payment.legacy and secrets.legacy are required for the legacy driver");
      }
      const { createLegacyDriver } = await import("./legacy/driver.js");
      return createLegacyDriver({
        baseUrl: legacy.baseUrl,
        apiVersion: legacy.apiVersion,
        merchantId: legacy.merchantId,
        locationId: legacy.locationId,
        posId: legacy.posId,
        posUnitId: legacy.posUnitId,
        posName: config.unit.name,
        bulkRef: legacy.bulkRef,
        captureType: legacy.captureType,
        apiKey: keys.apiKey,
        merchantKey: keys.merchantKey,
        requestTimeoutMs: legacy.requestTimeoutMs,
        clock: deps.clock,
        logger,
        ownsOrder: deps.ownsOrder,
      });
    }
    default:
      throw new PaymentConfigError(
        `unknown payment driver ${JSON.stringify(String(driver))}; valid: v10, legacy`,
      );
  }
}
