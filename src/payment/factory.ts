import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import { unknownKind } from "../core/seams.js";
import type { PaymentDriver } from "./driver.js";
import type { LegacyDriverOptions } from "./legacy/options.js";
import type { V10DriverOptions } from "./v10/options.js";

/**
 * What the payment driver is (plain data, from src/config/seams.ts): the interface and its settings,
 * secrets included. Never logged: the client secret, API key and MerchantKey are in here.
 */
export type PaymentOptions =
  | ({ kind: "v10" } & Omit<V10DriverOptions, Collaborators | "newKey">)
  | ({ kind: "legacy" } & Omit<LegacyDriverOptions, Collaborators>);

type Collaborators = "clock" | "random" | "logger" | "ownsOrder" | "dispatcher";

export type PaymentKind = PaymentOptions["kind"];

/** The driver's collaborators. */
export interface PaymentDeps {
  clock: Clock;
  logger: Logger;
  /** The journal's answer to "is this order a live session of ours?" (1301 / busy-PoS recovery). */
  ownsOrder(orderId: string): boolean;
  /** Jitter source in [0, 1) for every retry backoff (default Math.random); seeded in repeatable fault runs. */
  random?: () => number;
  /** Runs request deadlines (default `clock`; see the drivers' `deadlineClock`). */
  deadlineClock?: Clock;
  /** Idempotency keys of the calls the driver originates itself (default `randomUUID`). */
  newKey?: () => string;
}

export const PAYMENT_KINDS: readonly PaymentKind[] = ["v10", "legacy"];

/**
 * Creates the payment driver the options name. Each implementation is imported only in its own case.
 * @throws SeamConfigError for a kind outside `v10 | legacy` (unchecked input).
 */
export async function createPaymentDriver(
  options: PaymentOptions,
  deps: PaymentDeps,
): Promise<PaymentDriver> {
  const logger = deps.logger.child({ component: "payment" });
  switch (options.kind) {
    case "v10": {
      const { createV10Driver } = await import("./v10/index.js");
      const { kind: _kind, ...v10 } = options;
      return createV10Driver({
        ...v10,
        clock: deps.clock,
        ...(deps.deadlineClock === undefined ? {} : { deadlineClock: deps.deadlineClock }),
        ...(deps.random === undefined ? {} : { random: deps.random }),
        logger,
        ownsOrder: deps.ownsOrder,
        newKey: deps.newKey ?? randomUUID,
      });
    }
    case "legacy": {
      const { createLegacyDriver } = await import("./legacy/driver.js");
      const { kind: _kind, ...legacy } = options;
      return createLegacyDriver({
        ...legacy,
        clock: deps.clock,
        ...(deps.deadlineClock === undefined ? {} : { deadlineClock: deps.deadlineClock }),
        ...(deps.random === undefined ? {} : { random: deps.random }),
        logger,
        ownsOrder: deps.ownsOrder,
      });
    }
    default:
      throw unknownKind("payment", options, PAYMENT_KINDS);
  }
}
