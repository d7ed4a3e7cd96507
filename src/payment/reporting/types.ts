/** The reporting client's public types: its error, the report lines and references, and its options. */
import type { Dispatcher } from "undici";
import type { Minor } from "../../core/money.js";
import type { RetryPolicy } from "../retry.js";

/** A refused or failed reporting call: status (0 for a transport failure) and a message without secrets. */
export class ReportingClientError extends Error {
  override readonly name = "ReportingClientError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One line of a report, money in signed minor units (payments positive; refunds and fees negative). */
export interface ReportLine {
  paymentPointId: string;
  type: string;
  amount: Minor;
  currencyCode: string;
  /** The line's time as the service wrote it, and as epoch ms. */
  timestamp: string;
  at: number;
  paymentTransactionId: string;
  /** The merchant's id of the payment (time range, v1: externalTransactionId; v2: merchantReference). */
  orderId: string | null;
  /** The transfer that settled it (time range lists and transfer contents); null when not settled yet. */
  transferReference: string | null;
}

export interface PaymentPointInfo {
  paymentPointId: string;
  paymentPointName: string;
}

export interface TransferRef {
  paymentPointId: string;
  transferReference: string;
  transferReferenceDate: string;
  amount: Minor;
  currencyCode: string;
}

export interface ReportingCredentials {
  /** Reporting base URL, e.g. `https://host/transaction-reporting/api/merchant`. */
  baseUrl: string;
  /** The OpenID Connect token endpoint. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The merchant's refresh token (from the consent flow, kept in the secrets file). */
  refreshToken: string;
  accessToken?: string;
}

export interface ReportingClientOptions extends ReportingCredentials {
  /** Called after every token exchange with the new refresh token (it rotates: persist it). */
  onRefreshToken?: (refreshToken: string) => void | Promise<void>;
  retry?: RetryPolicy;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  dispatcher?: Dispatcher;
  /** Called after each page is read (tests: a token expiry in the middle of paging; benches). */
  onPage?: (kind: string, page: number, nextPageToken: string | null) => void | Promise<void>;
}
