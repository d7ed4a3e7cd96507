import { describe, expect, it } from "vitest";
import { seededRandom } from "../../core/random.js";
import { parseInvoice, toMinor } from "../../emulator/invoices/validate.js";
import { invoiceJson } from "../../payment/invoices/client.js";
import {
  type BillableLine,
  buildInvoice,
  InvoiceBuildError,
  memberLines,
  priceLine,
  subsidisedLines,
  vatOfGross,
} from "./build.js";

/** VAT rates in basis points: 0, reduced rates, DK 25 %, FI 25.5 % and 14 %, odd ones. */
const RATES = [0, 1000, 1200, 1400, 1500, 2400, 2500, 2550, 333, 1];

function basket(rnd: () => number): BillableLine[] {
  const pick = (n: number) => Math.floor(rnd() * n);
  const products = Array.from({ length: 1 + pick(12) }, (_, i) => ({
    item: i + 1,
    price: pick(5) === 0 ? pick(100) : pick(60_000),
    vatBp: RATES[pick(RATES.length)] ?? 2500,
  }));
  return Array.from({ length: 1 + pick(40) }, () => {
    const p = products[pick(products.length)] ?? { item: 1, price: 1, vatBp: 2500 };
    return {
      articleNumber: String(p.item),
      description: `item ${p.item}`,
      quantity: 1 + (pick(4) === 0 ? pick(500) : pick(3)),
      unitPrice: p.price,
      vatBp: p.vatBp,
      unit: "pcs",
    };
  });
}

const nonNegInt = (n: number) => Number.isSafeInteger(n) && n >= 0;

describe("invoice builder: one rounding rule (VAT per article line, half up; totals are sums)", () => {
  it("vatOfGross rounds the contained VAT half up, exactly", () => {
    expect(vatOfGross(12_500, 2500)).toBe(2500); // 125.00 incl. 25 % → 25.00
    expect(vatOfGross(1, 2500)).toBe(0); // 0.2 → 0
    expect(vatOfGross(3, 2500)).toBe(1); // 0.6 → 1
    expect(vatOfGross(5, 2500)).toBe(1); // exactly 1.0
    expect(vatOfGross(25, 10_000)).toBe(13); // 12.5 → 13 (half up)
    expect(vatOfGross(2510, 2550)).toBe(510); // FI 25.5 %
    expect(vatOfGross(0, 2500)).toBe(0);
    expect(() => vatOfGross(-1, 2500)).toThrow(InvoiceBuildError);
    expect(() => vatOfGross(100, 10_001)).toThrow(InvoiceBuildError);
    expect(() =>
      priceLine({
        articleNumber: "1",
        description: "x",
        quantity: 0.5,
        unitPrice: 100,
        vatBp: 0,
        unit: "pcs",
      }),
    ).toThrow(InvoiceBuildError);
  });

  it("5,000 seeded random baskets: lines, VAT totals and invoice total agree to the minor unit; the seed's field rules hold", () => {
    const rnd = seededRandom(0x18_2026);
    let checked = 0;
    // Plain checks in the loop (expect() per value would make 5,000 baskets slow); failures are collected.
    const failures: string[] = [];
    const ok = (cond: boolean, what: string) => {
      if (!cond && failures.length < 20) failures.push(what);
    };
    for (let b = 0; b < 5000; b++) {
      const lines = basket(rnd);
      const inv = buildInvoice(lines);
      // The invoice total equals the vends: Σ quantity × unit price over the basket as taken.
      const taken = lines.reduce((s, l) => s + l.quantity * l.unitPrice, 0);
      ok(inv.total === taken, `basket ${b}: total ${inv.total} ≠ vends ${taken}`);
      ok(
        inv.articles.reduce((s, a) => s + a.quantity, 0) === lines.reduce((s, l) => s + l.quantity, 0),
        `basket ${b}: quantities`,
      );
      let gross = 0;
      let vat = 0;
      let net = 0;
      for (const a of inv.articles) {
        ok(
          [a.gross, a.vat, a.net, a.unitPrice, a.quantity].every(nonNegInt),
          `basket ${b}: negative/fraction`,
        );
        ok(a.net + a.vat === a.gross, `basket ${b}: net + VAT ≠ gross`);
        ok(a.gross === a.quantity * a.unitPrice, `basket ${b}: gross ≠ quantity × price`);
        // Half up, checked independently: 2·D·vat − 2·g·r ∈ (−D, D].
        const d = 10_000n + BigInt(a.vatBp);
        const diff = 2n * d * BigInt(a.vat) - 2n * BigInt(a.gross) * BigInt(a.vatBp);
        ok(diff > -d && diff <= d, `basket ${b}: VAT ${a.vat} of ${a.gross} at ${a.vatBp} bp not half up`);
        gross += a.gross;
        vat += a.vat;
        net += a.net;
      }
      ok(
        inv.total === gross && inv.vatTotal === vat && inv.netTotal === net,
        `basket ${b}: totals ≠ Σ lines`,
      );
      ok(inv.netTotal + inv.vatTotal === inv.total, `basket ${b}: net + VAT ≠ total`);
      ok(inv.vatByRate.reduce((s, r) => s + r.vat, 0) === inv.vatTotal, `basket ${b}: VAT by rate`);
      ok([inv.total, inv.vatTotal, inv.netTotal].every(nonNegInt), `basket ${b}: negative/fraction total`);
      if (inv.total <= 0) continue; // the seed needs TotalAmount > 0: such an invoice is never sent
      // The seed's field rules, as the emulator checks them (its own parser, §Invoice create input):
      // TotalAmount = Σ TotalPriceIncludingVat, TotalVatAmount = Σ TotalVATAmount, two decimals, VAT of
      // each line = VATRate applied to its total.
      const body = invoiceJson({
        issuerId: "0b2f6a62-1c33-4b5e-9d0e-5f8f3c1a2b4d",
        phone: "+4520031801",
        total: inv.total,
        vatTotal: inv.vatTotal,
        country: "DK",
        invoiceNumber: String(b + 1),
        issueDate: "2026-04-01",
        orderDate: "2026-03-01",
        deliveryDate: "2026-03-31",
        dueDate: "2026-04-15",
        articles: inv.articles,
      });
      const parsed = parseInvoice(JSON.parse(JSON.stringify(body)), "direct");
      ok(
        parsed.TotalAmount === inv.total && parsed.TotalVatAmount === inv.vatTotal,
        `basket ${b}: JSON totals`,
      );
      for (const [i, a] of parsed.InvoiceArticles.entries()) {
        const mine = inv.articles[i];
        ok(
          a.TotalPriceIncludingVat === mine?.gross &&
            a.TotalVATAmount === mine.vat &&
            toMinor(a.PricePerUnit) === mine.unitPrice &&
            a.Quantity * mine.unitPrice === mine.gross,
          `basket ${b}: JSON article ${i}`,
        );
      }
      checked += 1;
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(4900);
  });

  it("groups equal lines, bills only subsidised vends at the company's units, refuses an item without a catalogue entry", () => {
    const catalogue = new Map([
      [1, { item: 1, name: "Coffee", vat_bp: 2500, price: 1500 }],
      [2, { item: 2, name: "Water", vat_bp: 2500, price: 1000 }],
    ]);
    const sales = [
      { unit_id: "u1", item: 1, vends_ok: 1, member_id: null, result: "captured" },
      { unit_id: "u1", item: 1, vends_ok: 2, member_id: null, result: "captured" },
      { unit_id: "u2", item: 2, vends_ok: 1, member_id: null, result: "captured" },
      { unit_id: "u1", item: 2, vends_ok: 0, member_id: null, result: "cancelled" }, // nothing delivered
      { unit_id: "u1", item: 2, vends_ok: 1, member_id: "m1", result: "captured" }, // a plan vend: the plan pays
      { unit_id: "other", item: 1, vends_ok: 5, member_id: null, result: "captured" }, // not its unit
    ];
    const inv = buildInvoice(subsidisedLines(sales, new Set(["u1", "u2"]), catalogue));
    expect(inv.articles.map((a) => [a.articleNumber, a.quantity, a.gross, a.vat, a.net])).toEqual([
      ["1", 3, 4500, 900, 3600],
      ["2", 1, 1000, 200, 800],
    ]);
    expect([inv.total, inv.vatTotal, inv.netTotal]).toEqual([5500, 1100, 4400]);
    expect(() =>
      subsidisedLines(
        [{ unit_id: "u1", item: 9, vends_ok: 1, member_id: null, result: "captured" }],
        new Set(["u1"]),
        catalogue,
      ),
    ).toThrow(/item 9 is not in the product catalogue/);
  });

  it("bills the plan vends of the company's own members, at any unit, and no one else's", () => {
    const catalogue = new Map([[1, { item: 1, name: "Coffee", vat_bp: 2500, price: 1500 }]]);
    const sales = [
      { unit_id: "anywhere", item: 1, vends_ok: 2, member_id: "staff-1", result: "captured" }, // the company's member
      { unit_id: "u1", item: 1, vends_ok: 1, member_id: "staff-2", result: "captured" }, // the company's member
      { unit_id: "u1", item: 1, vends_ok: 4, member_id: "someone-else", result: "captured" }, // another plan pays
      { unit_id: "u1", item: 1, vends_ok: 3, member_id: null, result: "captured" }, // a paid vend, not a member's
      { unit_id: "u1", item: 1, vends_ok: 0, member_id: "staff-1", result: "cancelled" }, // nothing delivered
      // Issue 31: outcome unknown (a power cut after the dispense): counted by the unit, billed once.
      { unit_id: "u1", item: 1, vends_ok: 0, member_id: "staff-2", result: "captured" },
    ];
    const inv = buildInvoice(memberLines(sales, new Set(["staff-1", "staff-2"]), catalogue));
    expect(inv.articles.map((a) => [a.articleNumber, a.quantity, a.gross])).toEqual([["1", 4, 6000]]);
  });
});
