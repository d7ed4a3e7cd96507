import { DAY_MS } from "../../core/days.js";
import type { Minor } from "../../core/money.js";

/** Country and currency pairs of the subscriptions interface (seed 000: DKK with DK, EUR with FI). */
export type Country = "DK" | "FI";
export type Currency = "DKK" | "EUR";

/** How the emulator authenticates its callbacks to the merchant (seed 000 §Authentication). */
export type CallbackAuth =
  | { kind: "none" }
  | { kind: "basic"; username: string; password: string }
  | { kind: "apikey"; value: string }
  | { kind: "oauth2"; tokenUrl: string; clientId: string; clientSecret: string };

export interface Provider {
  providerId: string;
  merchantId: string;
  name: string;
  status: "Enabled" | "Pending";
  callbackUrl: string | null;
  auth: CallbackAuth;
}

/** A merchant of the subscriptions interface: its OAuth client, deprecated-interface gateway credentials, providers. */
export interface SubsMerchant {
  merchantId: string;
  /** The merchant's VAT number: the ledger's `merchant`, as transaction reporting groups it. */
  vat: string;
  clientId: string;
  clientSecret: string;
  gatewayClientId: string;
  gatewayClientSecret: string;
  /** Callback URL of the deprecated interface (PATCH /api/merchants/me). */
  deprecatedCallbackUrl: string | null;
  providers: string[];
}

export type AgreementStatus = "Pending" | "Accepted" | "Rejected" | "Expired" | "Canceled";

export interface Agreement {
  id: string;
  providerId: string;
  status: AgreementStatus;
  amount: Minor | null;
  currency: Currency;
  country: Country;
  plan: string;
  description: string | null;
  frequency: number;
  externalId: string | null;
  expiresAt: number;
  links: { userRedirect: string; success: string; cancel: string };
  mobilePhoneNumber: string | null;
  nextPaymentDate: string | null;
  disableNotificationManagement: boolean;
  /** The app user who accepted it. */
  phone: string | null;
  oneOffId: string | null;
  /** Which interface made it (the deprecated one caps due dates at 32 days). */
  deprecated: boolean;
  createdAt: number;
}

/** Payment states; `Received` (validation pending) and `Suspended` never appear in a callback. */
export type PaymentStatus =
  | "Received"
  | "Pending"
  | "Suspended"
  | "Executed"
  | "Declined"
  | "Rejected"
  | "Failed";

export interface SubsPayment {
  id: string;
  providerId: string;
  agreementId: string;
  /** Current amount; `originalAmount` is the ceiling of every decrease. */
  amount: Minor;
  originalAmount: Minor;
  dueDate: string;
  externalId: string;
  description: string;
  graceDays: number;
  status: PaymentStatus;
  /** Emulator ms of the next execution run while Pending/Suspended. */
  nextRunAt: number | null;
  executedAt: number | null;
  instantTransfer: boolean;
  refunded: Minor;
  deprecated: boolean;
  invoice: unknown;
  /** Emulator ms of receipt: validation ("right after receipt") judges the due date against it. */
  receivedAt: number;
}

export type OneOffStatus = "Requested" | "Reserved" | "Captured" | "Cancelled" | "Rejected" | "Expired";

export interface OneOff {
  id: string;
  providerId: string;
  agreementId: string;
  amount: Minor;
  captured: Minor;
  description: string;
  externalId: string;
  autoReserve: boolean;
  redirectUrl: string | null;
  status: OneOffStatus;
  /** Requested: expiry of the request; Reserved: end of the 7-day reservation life. */
  expiresAt: number;
  executedAt: number | null;
  instantTransfer: boolean;
  refunded: Minor;
  invoice: unknown;
}

export interface SubsRefund {
  id: string;
  paymentId: string;
  agreementId: string;
  amount: Minor;
  externalId: string | null;
  callbackUrl: string;
  status: "Requested" | "Issued" | "Declined";
  statusCode: number;
}

/** Per app user state of the subscriptions simulation. */
export interface SubsUserState {
  cardFails: boolean;
  blocked: boolean;
  instantTransfer: boolean;
}

export const RESERVATION_LIFE_MS = 7 * DAY_MS;
export const REFUND_WINDOW_MS = 30 * DAY_MS;
/** Execution of a due date starts at 03:15 UTC (seed 000; the time zone is the emulator's choice). */
export const EXECUTION_MINUTE = 3 * 60 + 15;
/** Retry runs of a failing payment, minutes after midnight UTC, repeated each grace day. */
export const RETRY_MINUTES = [6 * 60, 13 * 60 + 30, 18 * 60, 20 * 60, 22 * 60 + 30] as const;

/** `YYYY-MM-DD` (UTC) of an emulator instant. */
export function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Emulator ms of a UTC date plus minutes after midnight. */
export function at(date: string, minutes: number): number {
  return Date.parse(`${date}T00:00:00Z`) + minutes * 60_000;
}

/** Whole days from `from` to `to` (both `YYYY-MM-DD`). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

export function addDays(date: string, days: number): string {
  return dateOf(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS);
}

/** `YYYY-MM-DDThh:mm:ssZ` of an emulator instant. */
export function stamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
