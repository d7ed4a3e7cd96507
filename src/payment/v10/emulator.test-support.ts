import { randomUUID } from "node:crypto";
import { systemClock } from "../../core/clock.js";
import type { Emulator } from "../../emulator/index.js";
import type { PaymentDriver, PaymentObservation, PaymentRef } from "../driver.js";
import { seededRandom } from "../retry.js";
import { watchPayment } from "../watch.js";
import { createV10Driver } from "./index.js";
import type { V10DriverOptions } from "./options.js";

/**
 * Test fixture: a V10 driver wired to an in-process emulator (helper A's `startEmulator`), over real HTTP
 * on 127.0.0.1. Not used by production code.
 */
export function emulatorDriver(emu: Emulator, over: Partial<V10DriverOptions> = {}): PaymentDriver {
  const v = emu.info.v10;
  return createV10Driver({
    baseUrl: v.baseUrl,
    tokenUrl: v.tokenUrl,
    clientId: v.clientId,
    clientSecret: v.clientSecret,
    merchantVat: v.merchantVat,
    clientSystemName: "vendd",
    clientSystemVersion: "0.1.0",
    storeId: v.storeId,
    merchantBrandId: v.merchantBrandId,
    merchantLocationId: v.merchantLocationId,
    merchantPosId: `unit-${randomUUID().slice(0, 8)}`,
    posName: "Vending 1",
    beaconId: null,
    supportedBeaconTypes: ["QR"],
    requirePaymentBeforeCheckin: true,
    currency: "DKK",
    timeouts: { postMs: 500, getMs: 300 },
    clock: systemClock,
    random: seededRandom(3),
    ownsOrder: () => false,
    newKey: () => randomUUID(),
    ...over,
  });
}

/**
 * Polls (spaced by pollDelayMs, real time) until `until` or a final state; bounded to 200 polls. The first
 * poll waits `firstDelayMs` (default 25 ms, above the tests' 20 ms pollDelayInMs) after any earlier poll.
 */
export async function pollUntil(
  driver: PaymentDriver,
  ref: PaymentRef,
  until: (o: PaymentObservation) => boolean,
  firstDelayMs = 25,
): Promise<PaymentObservation> {
  let last: PaymentObservation | null = null;
  let n = 0;
  for await (const obs of watchPayment(driver, ref, { clock: systemClock, until, firstDelayMs })) {
    last = obs;
    if (++n >= 200) break;
  }
  if (last === null) throw new Error("no observation");
  return last;
}

/** Starts a payment with a fresh key and order id. */
export async function startOrder(
  driver: PaymentDriver,
  amount: number,
  orderId = `o-${randomUUID().slice(0, 8)}`,
) {
  return driver.start({ orderId, amount, idempotencyKey: randomUUID() });
}
