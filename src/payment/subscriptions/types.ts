/**
 * The caller-facing types of the subscriptions client (client.ts): its options, its error, and the
 * requests for agreements, subscription payments ("charges") and one-off payments, amounts in minor units.
 */
import type { Clock } from "../../core/clock.js";
import type { Minor } from "../../core/money.js";
import type { RetryPolicy } from "../retry.js";

export interface SubscriptionsClientOptions {
  /** Base URL of the service (no trailing slash), e.g. `https://api.example`. */
  baseUrl: string;
  /** Token endpoint (OAuth 2.0 client credentials). */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  providerId: string;
  clock: Clock;
  random?: () => number;
  retry?: RetryPolicy;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
}

/** A refused or failed call: the HTTP status (0 for a network error) and a short reason without secrets. */
export class SubscriptionsError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "SubscriptionsError";
  }
}

export interface CallbackLinks {
  userRedirect: string;
  success: string;
  cancel: string;
}

export interface AgreementRequest {
  /** Amount shown to the user, minor units. */
  amount: Minor;
  currency: "DKK" | "EUR";
  countryCode: "DK" | "FI";
  /** Short text (30). */
  plan: string;
  description?: string;
  externalId: string;
  expirationMinutes: number;
  links: CallbackLinks;
  mobilePhoneNumber?: string;
  /** 12 = monthly (the default). */
  frequency?: number;
}

export interface ChargeRequest {
  agreementId: string;
  amount: Minor;
  /** `YYYY-MM-DD`, 1 to 126 days ahead. */
  dueDate: string;
  externalId: string;
  description: string;
  graceDays?: 1 | 2 | 3;
}

export interface OneOffRequest {
  amount: Minor;
  description: string;
  externalId: string;
  redirectUrl: string;
  autoReserve: boolean;
  expirationMinutes?: number;
}
