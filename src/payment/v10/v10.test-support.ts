import type { Clock, Timer } from "../../core/clock.js";
import { seededRandom } from "../retry.js";
import {
  FAKE_TOKEN_PATH,
  type FakeReply,
  type FakeRequest,
  tokenReply,
} from "./fake-service.test-support.js";
import type { V10DriverOptions } from "./options.js";

/**
 * Test fixture: driver options for loopback tests and a clock that records the sleeps it was asked for and
 * resolves them at once (for paths whose only sleeps are retry backoffs). Not used by production code.
 */

/**
 * A virtual clock for real loopback I/O: `sleep(ms)` is recorded and resolves at once, moving virtual time
 * by `ms`; timers (the request deadlines) fire in real time and move virtual time to their due time. So
 * `now()` advances by exactly the sleeps plus the deadlines that expired: a hang costs its timeout, an
 * answered request costs nothing, and a test can assert the time to an answer without a wall clock.
 */
export class RecordingClock implements Clock {
  readonly sleeps: number[] = [];
  private t = 1_700_000_000_000;

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const due = this.t + Math.max(0, ms);
    const h = setTimeout(
      () => {
        this.t = Math.max(this.t, due);
        fn();
      },
      Math.max(0, ms),
    );
    return { cancel: () => clearTimeout(h) };
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.t += ms;
  }

  /** Moves time without sleeping (token expiry tests). */
  advance(ms: number): void {
    this.t += ms;
  }
}

let keySeq = 0;

/** A fresh test idempotency key (≤ 36 characters). */
export function testKey(label = "k"): string {
  keySeq += 1;
  return `${label}-${process.pid}-${keySeq}-${Math.random().toString(36).slice(2, 10)}`.slice(0, 36);
}

/** Options with test defaults; `over` replaces any of them. */
export function testOptions(
  base: { baseUrl: string; tokenUrl: string; clientId?: string; clientSecret?: string; merchantVat?: string },
  over: Partial<V10DriverOptions> & Pick<V10DriverOptions, "clock">,
): V10DriverOptions {
  return {
    baseUrl: base.baseUrl,
    tokenUrl: base.tokenUrl,
    clientId: base.clientId ?? "client-1",
    clientSecret: base.clientSecret ?? "secret-canary-7f3a",
    merchantVat: base.merchantVat ?? "DK12345678",
    clientSystemName: "vendd",
    clientSystemVersion: "0.1.0",
    storeId: "store-1",
    merchantBrandId: null,
    merchantLocationId: null,
    merchantPosId: "unit-1",
    posName: "Vending 1",
    beaconId: null,
    supportedBeaconTypes: ["QR"],
    requirePaymentBeforeCheckin: true,
    currency: "DKK",
    timeouts: { postMs: 300, getMs: 300 },
    random: seededRandom(1),
    ownsOrder: () => false,
    newKey: () => testKey("pos"),
    ...over,
  };
}

/**
 * Answers the token endpoint and the PoS lookup that `open()` makes with the defaults of `testOptions`
 * (store `store-1`, PoS `pos-1`, beacon `beacon-1`); null for every other request.
 */
export function basicV10Reply(req: FakeRequest, token = "token-1"): FakeReply | null {
  if (req.method === "POST" && req.path === FAKE_TOKEN_PATH) return tokenReply(token);
  if (req.method === "GET" && req.path === "/v10/pointofsales")
    return { status: 200, body: { posIds: ["pos-1"] } };
  if (req.method === "GET" && req.path === "/v10/pointofsales/pos-1") {
    return {
      status: 200,
      body: {
        posId: "pos-1",
        merchantPosId: "unit-1",
        storeId: "store-1",
        name: "Vending 1",
        beaconId: "beacon-1",
        supportedBeaconTypes: ["QR"],
        requirePaymentBeforeCheckin: true,
      },
    };
  }
  return null;
}
