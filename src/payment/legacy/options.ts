import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { Clock } from "../../core/clock.js";
import type { Backoff } from "../retry.js";

/** Configuration and collaborators of the older-interface driver (`payment.driver: legacy`). */
export interface LegacyDriverOptions {
  /** Service root; `/API/{apiVersion}/{Operation}` is appended (pos-legacy §1). */
  baseUrl: string;
  /** `V` + two digits, e.g. `"V08"` (pos-legacy §1 default). */
  apiVersion: string;
  merchantId: string;
  locationId: string;
  /** This unit's stable PoSId (≤ 256 characters; seed "PoSId"). */
  posId: string;
  /** The 15-digit PoSUnitId customers check in on (pos-legacy §2, §9). */
  posUnitId: string;
  /** Name shown in the app after check-in. */
  posName: string;
  /** ≤ 18 characters, may be `""` (seed "BulkRef"). */
  bulkRef: string;
  /** Default CaptureType of reservations when a start does not name one. */
  captureType: "full" | "partial";
  /** Signs every request (pos-legacy §3). Never logged, never in an error message. */
  apiKey: string;
  /** Keys the PaymentStart HMAC (seed). Never logged, never in an error message. */
  merchantKey: string;
  /** Per-request timeout, ms (default 2000). */
  requestTimeoutMs?: number;
  /**
   * Backoff before the one repeat of a mutation after a lost answer (pos-legacy §11; retry.ts): default
   * base 100 ms, max 2000 ms.
   */
  backoff?: Partial<Backoff>;
  /** Source of the signing timestamp (ms), the request deadline and the repeat waits (pos-legacy §3). */
  clock: Clock;
  /**
   * Runs the request deadlines (default: \`clock\`). A test that moves \`clock\` by hand while real HTTP is in
   * flight passes the system clock here, so a deadline measures the exchange, not the test's stepping.
   */
  deadlineClock?: Clock;
  /** Jitter source in [0, 1); default Math.random. */
  random?: () => number;
  logger?: Logger;
  /** Journal ownership: true when the unit's journal owns this order as a live session (§10 recovery). */
  ownsOrder(orderId: string): boolean;
  /** HTTP dispatcher; default a keep-alive undici Agent owned (and closed) by the driver. */
  dispatcher?: Dispatcher;
}

/** Seed "Limits": poll an older-interface payment or reservation every 1 second. */
export const POLL_DELAY_MS = 1000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 2000;

/** Thrown by `createLegacyDriver` for options that cannot work; names the option, never a secret's value. */
export class LegacyOptionsError extends Error {
  override readonly name = "LegacyOptionsError";
  readonly code = "invalidOptions";
}

/** Checks the options that the service would otherwise refuse on every call. */
export function checkOptions(o: LegacyDriverOptions): void {
  const fail = (what: string) => {
    throw new LegacyOptionsError(`legacy driver: ${what}`);
  };
  if (!/^https?:\/\//.test(o.baseUrl)) fail("baseUrl must be an http(s) URL");
  if (!/^V\d\d$/.test(o.apiVersion)) fail("apiVersion must be V and two digits, e.g. V08");
  if (o.merchantId === "" || o.locationId === "") fail("merchantId and locationId are required");
  if (o.posId === "" || o.posId.length > 256) fail("posId must be 1-256 characters");
  if (!/^\d{15}$/.test(o.posUnitId)) fail("posUnitId must be 15 digits");
  if (o.posName === "") fail("posName is required");
  if (o.bulkRef.length > 18) fail("bulkRef must be at most 18 characters");
  if (o.apiKey === "" || o.merchantKey === "") fail("apiKey and merchantKey are required");
  const t = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(t) || t <= 0) fail("requestTimeoutMs must be a positive number of ms");
  for (const [key, v] of Object.entries(o.backoff ?? {})) {
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) fail(`backoff.${key} must be a number of ms >= 0`);
  }
}
