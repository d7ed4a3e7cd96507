import type { VenddConfig } from "../../config/load.js";
import type { EngineOptions } from "./runner.js";

/** The engine's options from a validated configuration (the daemon and the demo use the same mapping). */
export function engineOptions(config: VenddConfig): EngineOptions {
  const legacy = config.payment.driver === "legacy" ? config.payment.legacy : undefined;
  return {
    flow: config.engine.flow,
    // The older interface has no check-in query: it keeps an idle reservation instead (pos-legacy §9).
    checkinMode: config.payment.driver === "v10" ? (config.payment.v10?.checkin ?? "poll") : "idlePayment",
    sessionMax: config.engine.sessionMaxMinor,
    currency: config.currency,
    scheme: config.display.scheme,
    paymentTimeoutMs: config.engine.paymentTimeoutMs,
    vendTimeoutMs: config.engine.vendTimeoutMs,
    unknownOutcome: config.engine.unknownOutcome,
    paymentMode: legacy?.mode ?? "reservation",
    captureType: legacy?.captureType ?? "full",
  };
}
