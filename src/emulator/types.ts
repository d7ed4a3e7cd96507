import type { IncomingHttpHeaders } from "node:http";
import type { Minor } from "../core/money.js";

/**
 * Internal contract of the payment-service emulator. The HTTP server (server.ts) parses a request into an
 * `EmuRequest` and asks each interface handler in turn (V10, older interface, user simulation, admin);
 * the first non-null `EmuResponse` is sent. Interfaces share one virtual clock, one ledger and one set of
 * simulated app users.
 */
export interface EmuRequest {
  method: string;
  /** Path without the query string, e.g. `/v10/payments/abc`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Node's raw header list, to detect repeated headers (pos-v10 §3). */
  rawHeaders: string[];
  /** The exact body bytes (≤ the configured limit; larger bodies are answered 413 by the server). */
  body: Buffer;
  /** The absolute URL as the client requested it: `http://` + Host header + path and query. */
  url: string;
  /**
   * A fault-injected pause (admin `delay` fault; absent otherwise). A handler that serialises requests (V10
   * idempotency keys) awaits it inside its critical section, so that a retry arriving meanwhile sees the first
   * request still running; the server awaits it (once) before answering when the handler did not.
   */
  hold?: () => Promise<void>;
}

export interface EmuResponse {
  status: number;
  /** Serialised as JSON when present; absent means an empty body. */
  body?: unknown;
  headers?: Record<string, string>;
  /** A non-JSON body sent as is (e.g. CSV); its content-type goes in `headers`. Wins over `body`. */
  text?: string;
}

export interface InterfaceHandler {
  /** Answers the request, or resolves `null` when the path is not this handler's. */
  handle(req: EmuRequest): Promise<EmuResponse | null>;
}

/** Emulator time: virtual, starts at wall-clock time and moves with it plus every admin advance. */
export interface EmuClock {
  now(): number;
  /**
   * Adds `ms` to virtual time and runs every rule that became due (expiry, auto-capture, inactivity, due
   * dates, cut-offs), each at its own time: the clock stops at every scheduled time within the jump, in
   * order, and runs the tick listeners there, so a jump records what living through it would.
   */
  advance(ms: number): void;
  /** Subscribes to time moving (after an advance, and on each periodic tick); returns unsubscribe. */
  onTick(listener: (now: number) => void): () => void;
  /**
   * Registers a source of scheduled events: `next()` answers the earliest emulator time at which a tick
   * listener of that source has something to do (a time at or before now = at once; null = nothing
   * scheduled). `advance` stops at each such time. Returns unregister.
   */
  schedule(next: () => number | null): () => void;
}

export type LedgerKind = "reserved" | "paid" | "captured" | "cancelled" | "expired" | "refunded";

/** One money movement, as the exactly-once tests see it. */
/**
 * Which interface moved the money: the two point-of-sale interfaces (seed 001), subscriptions (agreements'
 * charges and one-off payments, seed 000), invoices and online payments (seed 002). Transaction reporting
 * (seed 002) is built from all of them.
 */
export type LedgerSource = "v10" | "legacy" | "subscriptions" | "invoices" | "online";

export interface LedgerEntry {
  seq: number;
  interface: LedgerSource;
  /** V10 paymentId (or refundId for `refunded`), older interface OrderId. */
  id: string;
  /** For refunds, the payment they belong to. */
  paymentId: string | null;
  orderId: string;
  kind: LedgerKind;
  amount: Minor;
  /**
   * ISO 4217 alphabetic code of `amount` (the payment's own currency: a V10 payment's `currencyCode`, an
   * agreement's currency, an invoice's CurrencyCode, …); reporting lines and transfers carry it.
   */
  currency: string;
  /**
   * The merchant the money belongs to, as transaction reporting groups it (a VAT number, or the older
   * interface's merchant id); absent where the recording interface does not say.
   */
  merchant?: string;
  /** The payment point (store, PoS, agreement product, invoice issuer, online merchant) for reports. */
  point?: string;
  /** Emulator time, ms since epoch. */
  at: number;
}

export interface Ledger {
  record(entry: Omit<LedgerEntry, "seq" | "at">): LedgerEntry;
  entries(): readonly LedgerEntry[];
  /** Index in `entries()` of the first entry with `at >= time` (binary search: entries are in time order). */
  indexAt(time: number): number;
}

export type UserFeature =
  | "creditCard"
  | "debitCard"
  | "receiptToken"
  | "loyaltyMember"
  | "noPartialCapture"
  | "insufficientFunds"
  | "slowToAccept"
  | "walksAway";

export interface SimUser {
  phone: string;
  features: readonly UserFeature[];
  /** Age in years (online payments' `minimumServiceUserAge`); absent = an adult (30). */
  age?: number;
}

/**
 * Implemented by each interface's model so that one user-simulation API serves both: `beaconId` is a V10
 * PoS's beaconId or an older-interface PoSUnitId.
 */
export interface CheckinTarget {
  ownsBeacon(beaconId: string): boolean;
  checkin(beaconId: string, user: SimUser): EmuResponse;
  accept(beaconId: string, user: SimUser): EmuResponse;
  reject(beaconId: string): EmuResponse;
}
