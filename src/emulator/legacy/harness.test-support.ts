import {
  authorizationHeader,
  merchantKeyBytes,
  type PaymentStartHmacFields,
  paymentStartHmac,
} from "../../payment/legacy/signing.js";
import { createVirtualClock, type VirtualClock } from "../clock.js";
import { createLedger } from "../ledger.js";
import type { EmuRequest, InterfaceHandler, Ledger } from "../types.js";
import { defaultUsers, UserRegistry } from "../users.js";
import { createLegacyInterface, type LegacyInterface, type LegacyOptions, type LegacySeed } from "./index.js";

/** Inputs of {@link signedRequest}. */
export interface SignedRequestInit {
  /** Absolute origin the request claims, e.g. `http://127.0.0.1:8080`. */
  origin: string;
  apiKey: string;
  /** Operation name, e.g. `PaymentStart`. */
  operation: string;
  /** A JSON-serialisable body, or the exact body text. */
  body: unknown;
  /** Signing time, ms since the epoch (emulator time in in-process tests). */
  nowMs: number;
  /** API version segment (default `V08`, pos-legacy §1). */
  version?: string;
  method?: string;
}

/**
 * Builds an `EmuRequest` for the older interface, signed as a client would sign it (pos-legacy §3), so the
 * handler can be exercised in process without HTTP (tests, the demo's scripted PoS).
 */
export function signedRequest(init: SignedRequestInit): EmuRequest {
  const path = `/API/${init.version ?? "V08"}/${init.operation}`;
  const url = `${init.origin}${path}`;
  const text = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  const authorization = authorizationHeader(init.apiKey, url, text, Math.floor(init.nowMs / 1000));
  const host = new URL(init.origin).host;
  return {
    method: init.method ?? "POST",
    path,
    query: new URLSearchParams(),
    headers: { host, authorization, "content-type": "application/json" },
    rawHeaders: ["Host", host, "Authorization", authorization, "Content-Type", "application/json"],
    body: Buffer.from(text, "utf8"),
    url,
  };
}

/** What an in-process call answered. */
export interface CallResult {
  status: number;
  body: unknown;
}

/** A signing client that calls a handler in process (no HTTP): one method per call, any operation. */
export interface InProcessClient {
  call(operation: string, body: unknown): Promise<CallResult>;
}

export function inProcessClient(
  handler: InterfaceHandler,
  init: { origin: string; apiKey: string; now: () => number },
): InProcessClient {
  return {
    async call(operation, body) {
      const req = signedRequest({
        origin: init.origin,
        apiKey: init.apiKey,
        operation,
        body,
        nowMs: init.now(),
      });
      const res = await handler.handle(req);
      if (res === null) throw new Error(`handler did not answer ${operation}`);
      return { status: res.status, body: res.body };
    },
  };
}

/** Default test data of a standalone older-interface model (the real docs' example identifiers, §2). */
export const STANDALONE_SEED: LegacySeed = {
  merchantId: "POSDK99999",
  locationId: "88888",
  apiKey: "0f8fad5b-d9cb-469f-a165-70867728950e",
  merchantKey: "TestMerchantKey-0001",
  locationName: "Vending hall",
};

/** The older interface alone on a frozen virtual clock (moves only by `clock.advance`), with a signing client. */
export interface StandaloneLegacy {
  legacy: LegacyInterface;
  clock: VirtualClock;
  ledger: Ledger;
  client: InProcessClient;
  seed: LegacySeed;
  /** The PaymentStart HMAC for these fields under the seeded MerchantKey. */
  hmac(f: Omit<PaymentStartHmacFields, "merchantId" | "locationId">): string;
}

export function createStandaloneLegacy(
  options: LegacyOptions & { startTime?: number } = {},
): StandaloneLegacy {
  const clock = createVirtualClock({
    startTime: options.startTime ?? 1_700_000_000_000,
    timeSource: () => 0,
    tickMs: 0,
  });
  const ledger = createLedger(clock);
  const users = new UserRegistry(defaultUsers());
  const seed = STANDALONE_SEED;
  const legacy = createLegacyInterface(
    { clock, ledger, findUser: (phone) => users.find(phone) },
    seed,
    options,
  );
  const client = inProcessClient(legacy, {
    origin: "http://127.0.0.1:8080",
    apiKey: seed.apiKey,
    now: clock.now,
  });
  const key = merchantKeyBytes(seed.merchantKey);
  const hmac = (f: Omit<PaymentStartHmacFields, "merchantId" | "locationId">): string =>
    paymentStartHmac(key, { merchantId: seed.merchantId, locationId: seed.locationId, ...f });
  return { legacy, clock, ledger, client, seed, hmac };
}
