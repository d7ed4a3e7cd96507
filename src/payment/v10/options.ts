import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { Clock } from "../../core/clock.js";

/** Per-request timeouts by default, ms (pos-v10 §12: POST and DELETE 2 s, GET 0.5 s). */
export const DEFAULT_V10_TIMEOUTS: Readonly<{ postMs: number; getMs: number }> = Object.freeze({
  postMs: 2000,
  getMs: 500,
});

/** Beacon types a PoS can announce (pos-v10 §6). */
export type BeaconType = "QR" | "NFC" | "Bluetooth";

/** Configuration and collaborators of the V10 driver. */
export interface V10DriverOptions {
  /** V10 API root; paths `/v10/...` are appended (pos-v10 §1). */
  baseUrl: string;
  /** Full URL of the token endpoint, e.g. `{auth_url}/connect/token` (pos-v10 §2). */
  tokenUrl: string;
  /** Integrator client id (token endpoint, Basic auth user). */
  clientId: string;
  /** Integrator client secret. Never logged, never in an error message. */
  clientSecret: string;
  /** `DK12345678` / `FI12345678`: token claim and `x-service-merchant-vat-number` header. */
  merchantVat: string;
  /** `x-service-client-system-name` (≤ 36 valid characters). */
  clientSystemName: string;
  /** `x-service-client-system-version`, `Major.Minor.Build`. */
  clientSystemVersion: string;
  /** Known store id, or null to look it up by brand and location (pos-v10 §12). */
  storeId: string | null;
  merchantBrandId: string | null;
  merchantLocationId: string | null;
  /** Client-chosen PoS id, the lookup key of the PoS (seed rule 2). */
  merchantPosId: string;
  /** PoS name shown in the app (≤ 36 valid characters). */
  posName: string;
  /** A fixed beaconId (15 digits or a GUID), or null to let the service generate one (pos-v10 §14). */
  beaconId: string | null;
  supportedBeaconTypes: BeaconType[];
  /** pos-v10 §10: true on self-service units so that a walked-away check-in never pairs. */
  requirePaymentBeforeCheckin: boolean;
  currency: "DKK" | "EUR";
  /** Per-request timeouts in ms (pos-v10 §12): POST/DELETE default 2000, GET default 500. */
  timeouts?: { postMs?: number; getMs?: number };
  /** Retry policy (retry.ts): max retries default 2, base delay 100 ms, max delay 2000 ms. */
  retries?: { max?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Backoff sleeps, refund polling and token expiry use this clock. */
  clock: Clock;
  /**
   * Runs the request deadlines (default: \`clock\`). A test that moves \`clock\` by hand while real HTTP is in
   * flight passes the system clock here, so a deadline measures the exchange, not the test's stepping.
   */
  deadlineClock?: Clock;
  /** Jitter source in [0, 1); default Math.random. */
  random?: () => number;
  logger?: Logger;
  /** Journal ownership: true when the unit's journal owns this order as a live session (1301 recovery). */
  ownsOrder(orderId: string): boolean;
  /** Creates a new idempotency key for calls the driver originates itself (PoS creation). */
  newKey(): string;
  /** HTTP dispatcher; default a keep-alive undici Agent owned (and closed) by the driver. */
  dispatcher?: Dispatcher;
}
