import { amountToJson, formatAmount, type Minor } from "../../core/money.js";
import { currencyOfCountry } from "../currency.js";
import type { LedgerSource } from "../types.js";

/** Transaction types of the reporting interface (seed 002 "Transaction elements"). */
export type TxType =
  | "Payment"
  | "Refund"
  | "TransactionFee"
  | "ServiceFee"
  | "ReturnedTransaction"
  | "Adjustment";

/** A merchant as reporting shows it: the token's subject, owner of payment points. */
export interface ReportMerchant {
  /** Public merchant id, usually the VAT number (the ledger's `merchant`). */
  merchantId: string;
  merchantName: string;
  /** Company registration number (transfer contents v2): the VAT number without its country prefix. */
  companyRegNo: string;
  /** The account transfers go to (an IBAN-shaped emulator number). */
  receiverAccount: string;
  /** ISO 4217 currency of the merchant's payment points (from the VAT country: DK → DKK, FI → EUR, …). */
  currency: string;
  /** Fees invoiced to the merchant: neither deducted from transfers nor visible (seed 002). */
  feesInvoiced: boolean;
}

/** A payment point: a V10 store (older-interface location included), subscription provider, issuer, … */
export interface PaymentPoint {
  paymentPointId: string;
  paymentPointName: string;
  merchant: ReportMerchant;
  /** Transactions in time order (the ledger's order): time ranges are found by binary search. */
  txs: Tx[];
  /** Transfers in date order (one per day and currency at most). */
  transfers: Transfer[];
  /** Transactions before this index were looked at by a cut-off (settled, or carried below). */
  carriedTo: number;
  /**
   * Per currency, the lines a cut-off looked at without settling them (their net was zero or negative) and
   * their net, minor units: they join that currency's next transfer.
   */
  carried: Map<string, { net: Minor; lines: Tx[] }>;
}

/** One line of a report: a ledger entry's money movement, or a fee derived from a payment. */
export interface Tx {
  type: TxType;
  /** Minor units, signed from the merchant's side: payments positive, refunds and fees negative. */
  amount: Minor;
  /** ISO 4217 code of `amount`: the ledger entry's own currency (a fee is in its payment's currency). */
  currency: string;
  /** Completion time, emulator ms. */
  at: number;
  /** The ledger entry this line comes from; `paymentTransactionId` derives from it (`txId`). */
  seq: number;
  /** The id the merchant gave when initiating (the ledger's `orderId`). */
  externalTransactionId: string | null;
  transfer: Transfer | null;
}

/** A daily settlement transfer of one payment point in one currency. */
export interface Transfer {
  transferReference: string;
  /** `YYYY-MM-DD`, the day the transfer is made (the day after the sales it covers). */
  transferReferenceDate: string;
  /** Net of the covered transactions, minor units (> 0). */
  amount: Minor;
  /** ISO 4217 code of every covered line and of `amount`. */
  currency: string;
  point: PaymentPoint;
  /** The covered lines (this currency's lines of the point, in time order). */
  txs: Tx[];
}

/** A line's `paymentTransactionId`: unique per ledger entry (a payment's fee line shares it). */
export function txId(t: Pick<Tx, "seq">): string {
  return String(7_000_000_000 + t.seq);
}

export const DAY_MS = 24 * 3600_000;
/** Transfers for day D (UTC) are made at 02:00 UTC on D+1, dated D+1 (emulator choice; seed: "the next day"). */
export const TRANSFER_CUTOFF_MS = 2 * 3600_000;
/** Reporting page size (seed 002 "Limits"). */
export const PAGE_SIZE = 1000;

/**
 * The emulator's fee schedule (the seed names fees, not their size): a `TransactionFee` per payment, in basis
 * points of the amount, rounded half up to the minor unit; refunds cost nothing and do not return the fee.
 */
export const FEE_BASIS_POINTS: Readonly<Record<LedgerSource, number>> = {
  v10: 75,
  legacy: 75,
  subscriptions: 100,
  invoices: 100,
  online: 125,
};

/** The TransactionFee of a payment of `amount` minor units through `source` (positive minor units). */
export function transactionFee(source: LedgerSource, amount: Minor): Minor {
  return Math.floor((amount * FEE_BASIS_POINTS[source] + 5000) / 10_000);
}

/** Builds a reporting merchant from its id (a VAT number such as `DK12345678`, or any other id). */
export function makeMerchant(merchantId: string, merchantName?: string): ReportMerchant {
  const country = /^[A-Z]{2}/.test(merchantId) ? merchantId.slice(0, 2) : "DK";
  const digits = merchantId.replace(/\D/g, "");
  const account = `${digits}0000000000`.slice(0, 10);
  return {
    merchantId,
    merchantName: merchantName ?? `Merchant ${merchantId}`,
    companyRegNo: /^[A-Z]{2}/.test(merchantId) ? merchantId.slice(2) : merchantId,
    receiverAccount: `${country}500040${account}`,
    currency: currencyOfCountry(country) ?? "EUR",
    feesInvoiced: false,
  };
}

/** `YYYY-MM-DD` of a UTC day. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `YYYY-MM-DDTHH:mm:ssZ` (the reporting interface's date-time form, seed 002 "Conventions"). */
export function isoSeconds(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastStamp = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
  }
  return lastStamp;
}
/** The last second formatted: a payment and its fee, and neighbouring lines, share it. */
let lastSecond = Number.NaN;
let lastStamp = "";

/** Signed minor units as the interface's decimal (JSON number; 2 decimals for every supported currency). */
export function decimal(minor: Minor): number {
  return minor < 0 ? -amountToJson(-minor) : amountToJson(minor);
}

/** Signed minor units as decimal text with two places (`-12.50`), for CSV. */
export function decimalText(minor: Minor): string {
  return minor < 0 ? `-${formatAmount(-minor)}` : formatAmount(minor);
}
