import { createHash } from "node:crypto";
import { lowerBound } from "../ledger.js";
import type { EmuClock, Ledger, LedgerEntry, LedgerSource } from "../types.js";
import {
  DAY_MS,
  isoDate,
  makeMerchant,
  type PaymentPoint,
  type ReportMerchant,
  TRANSFER_CUTOFF_MS,
  type Transfer,
  type Tx,
  transactionFee,
} from "./model.js";

/** A payment point known before any money moves (seeded V10 stores and the older interface's location). */
export interface PointSeed {
  paymentPointId: string;
  paymentPointName: string;
  merchantId: string;
  merchantName?: string;
  /** Further ledger scopes (`interface|merchant|point`) this payment point collects, e.g. the older interface. */
  aliases?: { source: LedgerSource; merchant: string; point: string }[];
}

const LABELS: Readonly<Record<LedgerSource, string>> = {
  v10: "Point of sale",
  legacy: "Point of sale",
  subscriptions: "Subscriptions",
  invoices: "Invoices",
  online: "Online payments",
};

/** A deterministic GUID for a generated payment point (merchant + interface). */
function derivedGuid(text: string): string {
  const h = createHash("sha256").update(text).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** One report line (a plain literal of one shape: the sync builds 100,000 of them for a busy day). */
function line(type: Tx["type"], amount: number, e: LedgerEntry, ext: string): Tx {
  return {
    type,
    amount,
    currency: e.currency,
    at: e.at,
    externalTransactionId: ext,
    seq: e.seq,
    transfer: null,
  };
}

function aliasKey(source: LedgerSource, merchant: string | undefined, point: string | undefined): string {
  return `${source}|${merchant ?? ""}|${point ?? ""}`;
}

/**
 * Transaction reporting's books, built from the one ledger (seed 002 §Reporting): every money-taking entry
 * (`paid`, `captured`) becomes a `Payment` and, unless the merchant's fees are invoiced, a `TransactionFee`;
 * every `refunded` a `Refund`; reservations, cancels and expiries move no money to the merchant and are not
 * listed. Entries are read incrementally (by ledger position) when a report is asked for, and each payment
 * point keeps its lines in time order so that a time range is two binary searches.
 *
 * Transfers are made lazily but deterministically: a day's transfer exists once emulator time has passed the
 * next day's cut-off, and no entry can be added to a settled day afterwards because the ledger only appends
 * at the current time.
 */
export class ReportingBooks {
  readonly merchants = new Map<string, ReportMerchant>();
  readonly points = new Map<string, PaymentPoint>();
  private readonly aliases = new Map<string, PaymentPoint>();
  /** Ledger entries before this index have been read. */
  private read = 0;
  private transferSeq = 0;
  /** Every transfer in the order made (cut-off time, then payment point, then currency). */
  private readonly made: Transfer[] = [];
  readonly defaultMerchant: ReportMerchant;

  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Pick<EmuClock, "now">,
    seeds: readonly PointSeed[],
    defaultMerchantId: string,
  ) {
    for (const s of seeds) {
      const point = this.addPoint(
        s.paymentPointId,
        s.paymentPointName,
        this.merchant(s.merchantId, s.merchantName),
      );
      for (const a of s.aliases ?? []) this.aliases.set(aliasKey(a.source, a.merchant, a.point), point);
    }
    this.defaultMerchant = this.merchant(defaultMerchantId);
  }

  /** The merchant with this id, created on first sight. */
  merchant(merchantId: string, merchantName?: string): ReportMerchant {
    let m = this.merchants.get(merchantId);
    if (m === undefined) {
      m = makeMerchant(merchantId, merchantName);
      this.merchants.set(merchantId, m);
    } else if (merchantName !== undefined) {
      m.merchantName = merchantName;
    }
    return m;
  }

  private addPoint(id: string, name: string, merchant: ReportMerchant): PaymentPoint {
    const point: PaymentPoint = {
      paymentPointId: id,
      paymentPointName: name,
      merchant,
      txs: [],
      transfers: [],
      carriedTo: 0,
      carried: new Map(),
    };
    this.points.set(id, point);
    return point;
  }

  /**
   * The payment point of a ledger entry: its `point` when that is a known payment point id, else an alias
   * (older interface location), else a payment point created on first sight: id `point` (interfaces that
   * record a GUID: subscription provider, invoice issuer, online merchant), or, without `point`, one per
   * merchant and interface with a derived GUID. Entries without `merchant` belong to the seeded merchant.
   */
  private pointOf(e: LedgerEntry): PaymentPoint {
    if (e.point !== undefined) {
      const known = this.points.get(e.point);
      if (known) return known;
    }
    const key = aliasKey(e.interface, e.merchant, e.point);
    const aliased = this.aliases.get(key);
    if (aliased) return aliased;
    const merchant = e.merchant === undefined ? this.defaultMerchant : this.merchant(e.merchant);
    const id = e.point ?? derivedGuid(`${merchant.merchantId}|${e.interface}`);
    const point =
      this.points.get(id) ?? this.addPoint(id, `${LABELS[e.interface]} ${id.slice(0, 8)}`, merchant);
    this.aliases.set(key, point);
    return point;
  }

  /** Reads the ledger entries added since the last call. */
  sync(): void {
    const entries = this.ledger.entries();
    for (; this.read < entries.length; this.read++) {
      const e = entries[this.read] as LedgerEntry;
      if (e.kind !== "paid" && e.kind !== "captured" && e.kind !== "refunded") continue;
      if (e.amount <= 0) continue;
      const point = this.pointOf(e);
      const ext = e.orderId;
      if (e.kind === "refunded") {
        point.txs.push(line("Refund", -e.amount, e, ext));
        continue;
      }
      point.txs.push(line("Payment", e.amount, e, ext));
      if (!point.merchant.feesInvoiced) {
        const fee = transactionFee(e.interface, e.amount);
        if (fee > 0) point.txs.push(line("TransactionFee", -fee, e, ext));
      }
    }
  }

  /** Reads new ledger entries and makes every transfer whose cut-off has passed. */
  refresh(): Transfer[] {
    this.sync();
    const now = this.clock.now();
    const made: Transfer[] = [];
    for (const point of this.points.values()) this.settle(point, now, made);
    return made;
  }

  /**
   * Makes the point's due transfers: a day D's transactions (UTC) are settled at D+1 02:00, one transfer per
   * currency dated D+1 of that currency's net; a currency whose net (with its earlier carried days) is zero
   * or negative makes no transfer and is carried into its next transfer.
   */
  private settle(point: PaymentPoint, now: number, made: Transfer[]): void {
    const txs = point.txs;
    while (point.carriedTo < txs.length) {
      const first = txs[point.carriedTo] as Tx;
      const dayEnd = Math.floor(first.at / DAY_MS) * DAY_MS + DAY_MS;
      if (now < dayEnd + TRANSFER_CUTOFF_MS) return;
      const end = lowerBound(txs, dayEnd, (t) => t.at);
      for (let i = point.carriedTo; i < end; i++) {
        const t = txs[i] as Tx;
        let c = point.carried.get(t.currency);
        if (c === undefined) {
          c = { net: 0, lines: [] };
          point.carried.set(t.currency, c);
        }
        c.net += t.amount;
        c.lines.push(t);
      }
      point.carriedTo = end;
      const date = isoDate(dayEnd);
      for (const currency of [...point.carried.keys()].sort()) {
        const c = point.carried.get(currency);
        if (c === undefined || c.net <= 0) continue;
        this.transferSeq += 1;
        const transfer: Transfer = {
          transferReference: `${date.replace(/-/g, "")}${String(this.transferSeq).padStart(8, "0")}`,
          transferReferenceDate: date,
          amount: c.net,
          currency,
          point,
          txs: c.lines,
        };
        for (const t of c.lines) t.transfer = transfer;
        point.transfers.push(transfer);
        made.push(transfer);
        this.made.push(transfer);
        point.carried.delete(currency);
      }
    }
  }

  /**
   * The next cut-off that will settle something (the clock stops there within an advance, so that transfers
   * are made in cut-off order however time moves): the cut-off after the day of each payment point's first
   * line not yet looked at; null when every line was.
   */
  nextCutoffDue(): number | null {
    this.sync();
    let min: number | null = null;
    for (const point of this.points.values()) {
      const first = point.txs[point.carriedTo];
      if (first === undefined) continue;
      const t = Math.floor(first.at / DAY_MS) * DAY_MS + DAY_MS + TRANSFER_CUTOFF_MS;
      if (min === null || t < min) min = t;
    }
    return min;
  }

  /** How many transfers were made so far; `madeSince(count)` lists the later ones. */
  get madeCount(): number {
    return this.made.length;
  }

  madeSince(count: number): Transfer[] {
    return this.made.slice(count);
  }

  /** Sets whether a merchant's fees are invoiced (from now on: lines already read keep their fees). */
  setFeesInvoiced(merchantId: string, invoiced: boolean): void {
    this.sync();
    this.merchant(merchantId).feesInvoiced = invoiced;
  }

  /** The next transfer cut-off strictly after `now`. */
  static nextCutoff(now: number): number {
    const today = Math.floor(now / DAY_MS) * DAY_MS + TRANSFER_CUTOFF_MS;
    return today > now ? today : today + DAY_MS;
  }

  /** Every transfer so far, in the order made. */
  transfers(): Transfer[] {
    this.refresh();
    return [...this.points.values()].flatMap((p) => p.transfers);
  }
}
