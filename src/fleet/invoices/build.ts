/**
 * The invoice builder (issue 18, company invoices): a company's month of vends → invoice articles, exact in
 * integer minor units. Pure: no database, no clock.
 *
 * The one rounding rule: per article line,
 *   gross = quantity × unit price incl. VAT            (exact, integers)
 *   VAT   = round-half-up(gross × r / (10000 + r))      (r = VAT rate in basis points; 2500 = 25 %)
 *   net   = gross − VAT                                 (so net + VAT = gross by construction)
 * and the invoice's totals are the sums of the line totals (so they agree with the lines to the minor unit
 * by construction). VAT is never computed on the invoice total or per unit.
 */
import type { Minor } from "../../core/money.js";
import { countedPlanVends } from "../plans/index.js";

/** One line to bill before pricing: what was taken, how many, at what price incl. VAT. */
export interface BillableLine {
  /** Article number shown on the invoice (the item number, or a fee code). */
  articleNumber: string;
  description: string;
  /** Whole units (vends, months). */
  quantity: number;
  /** Price per unit including VAT, minor units. */
  unitPrice: Minor;
  /** VAT rate in basis points (2500 = 25 %, 1400 = 14 %, 0 = exempt). */
  vatBp: number;
  /** Unit of measure (seed §InvoiceArticles `Unit`), e.g. `pcs`. */
  unit: string;
}

/** A priced article line; every amount in minor units. */
export interface ArticleLine extends BillableLine {
  gross: Minor;
  vat: Minor;
  net: Minor;
}

export interface BuiltInvoice {
  articles: ArticleLine[];
  /** Σ gross of the lines. */
  total: Minor;
  /** Σ VAT of the lines. */
  vatTotal: Minor;
  /** Σ net of the lines (= total − vatTotal). */
  netTotal: Minor;
  /** VAT per rate (seed §Invoice details `InvoiceVatTotals`), ascending by rate. */
  vatByRate: { vatBp: number; vat: Minor }[];
}

export class InvoiceBuildError extends Error {
  override readonly name = "InvoiceBuildError";
}

function check(cond: boolean, message: string): asserts cond {
  if (!cond) throw new InvoiceBuildError(message);
}

/**
 * VAT contained in a gross amount at `vatBp` basis points, rounded half up to the minor unit:
 * ⌊(2·g·r + D) / (2·D)⌋ with D = 10000 + r, in exact integer arithmetic (BigInt: no float on the way).
 */
export function vatOfGross(gross: Minor, vatBp: number): Minor {
  check(Number.isSafeInteger(gross) && gross >= 0, `gross ${gross} is not a non-negative integer`);
  check(Number.isInteger(vatBp) && vatBp >= 0 && vatBp <= 10_000, `VAT rate ${vatBp} bp is out of range`);
  const g = BigInt(gross);
  const r = BigInt(vatBp);
  const d = 10_000n + r;
  return Number((2n * g * r + d) / (2n * d));
}

/** Prices one line by the rounding rule above. */
export function priceLine(line: BillableLine): ArticleLine {
  check(
    Number.isSafeInteger(line.quantity) && line.quantity > 0,
    `quantity ${line.quantity} must be a positive integer`,
  );
  check(
    Number.isSafeInteger(line.unitPrice) && line.unitPrice >= 0,
    `unit price ${line.unitPrice} must be a non-negative integer`,
  );
  const gross = line.quantity * line.unitPrice;
  check(Number.isSafeInteger(gross), "line total out of range");
  const vat = vatOfGross(gross, line.vatBp);
  return { ...line, gross, vat, net: gross - vat };
}

/**
 * Groups equal lines (same article number, unit price and VAT rate) by adding their quantities, prices each
 * group once, and sums the totals. Articles are ordered by article number (numeric-aware), then price.
 */
export function buildInvoice(lines: readonly BillableLine[]): BuiltInvoice {
  const groups = new Map<string, BillableLine>();
  for (const l of lines) {
    const key = `${l.articleNumber}\u0000${l.unitPrice}\u0000${l.vatBp}`;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { ...l });
    else g.quantity += l.quantity;
  }
  const articles = [...groups.values()]
    .sort(
      (a, b) =>
        a.articleNumber.localeCompare(b.articleNumber, "en", { numeric: true }) ||
        a.unitPrice - b.unitPrice ||
        a.vatBp - b.vatBp,
    )
    .map(priceLine);
  let total = 0;
  let vatTotal = 0;
  const byRate = new Map<number, number>();
  for (const a of articles) {
    total += a.gross;
    vatTotal += a.vat;
    byRate.set(a.vatBp, (byRate.get(a.vatBp) ?? 0) + a.vat);
  }
  check(Number.isSafeInteger(total), "invoice total out of range");
  return {
    articles,
    total,
    vatTotal,
    netTotal: total - vatTotal,
    vatByRate: [...byRate].sort((a, b) => a[0] - b[0]).map(([vatBp, vat]) => ({ vatBp, vat })),
  };
}

/** A sales row as the builder needs it (src/fleet/db/schema.ts `sales`). */
export interface SaleForBilling {
  unit_id: string;
  item: number;
  vends_ok: number;
  member_id: string | null;
  /** The session's result: a member's `captured` plan vend counts even when its outcome is unknown. */
  result: string;
}

/** A catalogue entry (src/fleet/invoices/schema.ts `products`). */
export interface ProductForBilling {
  item: number;
  name: string;
  vat_bp: number;
  price: Minor;
}

/**
 * The billable lines of a company's subsidised vending: every vend delivered (`vends_ok`) at one of its
 * units, priced from the catalogue. Plan vends (`member_id` set) are not billed here: the member's plan
 * pays for them (or, for the company's own members, {@link memberLines}). Throws when an item vended is not
 * in the catalogue (its VAT rate is unknown).
 */
export function subsidisedLines(
  sales: readonly SaleForBilling[],
  units: ReadonlySet<string>,
  catalogue: ReadonlyMap<number, ProductForBilling>,
): BillableLine[] {
  return sales
    .filter((s) => units.has(s.unit_id) && s.member_id === null && s.vends_ok > 0)
    .map((s) => lineOf(s, catalogue));
}

/**
 * The billable lines of the company's own members (company-paid plan members, who pay no fee): every plan
 * vend they took, at any unit, priced from the company's catalogue.
 */
export function memberLines(
  sales: readonly SaleForBilling[],
  members: ReadonlySet<string>,
  catalogue: ReadonlyMap<number, ProductForBilling>,
): BillableLine[] {
  return sales
    .filter((s) => s.member_id !== null && members.has(s.member_id) && countedPlanVends(s) > 0)
    .map((s) => ({ ...lineOf(s, catalogue), quantity: countedPlanVends(s) }));
}

function lineOf(s: SaleForBilling, catalogue: ReadonlyMap<number, ProductForBilling>): BillableLine {
  const p = catalogue.get(s.item);
  if (p === undefined) throw new InvoiceBuildError(`item ${s.item} is not in the product catalogue`);
  return {
    articleNumber: String(p.item),
    description: p.name,
    quantity: s.vends_ok,
    unitPrice: p.price,
    vatBp: p.vat_bp,
    unit: "pcs",
  };
}
