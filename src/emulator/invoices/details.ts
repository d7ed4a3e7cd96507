/** The invoice details answer (seed 002 §Invoice details): amounts as decimals, VAT totals per rate, the issuer. */
import type { Invoice, InvoiceMerchant } from "./model.js";
import { toDecimal } from "./validate.js";

/** The invoice details answer (seed 002 §Invoice details). */
export function detailsView(inv: Invoice, m: InvoiceMerchant) {
  const issuer = m.issuers.find((i) => i.Id === inv.input.InvoiceIssuer);
  const byRate = new Map<number, number>();
  for (const a of inv.input.InvoiceArticles)
    byRate.set(a.VATRate, (byRate.get(a.VATRate) ?? 0) + a.TotalVATAmount);
  const i = inv.input;
  return {
    InvoiceId: inv.id,
    InvoiceNumber: i.InvoiceNumber,
    IssueDate: i.IssueDate,
    DueDate: i.DueDate,
    PaymentDate: inv.paymentDate,
    Comment: i.Comment,
    InvoiceArticles: i.InvoiceArticles.map((a) => ({
      ArticleNumber: a.ArticleNumber,
      ArticleDescription: a.ArticleDescription,
      TotalPriceIncludingVat: toDecimal(a.TotalPriceIncludingVat),
      Quantity: a.Quantity,
      PricePerUnit: a.PricePerUnit,
    })),
    CurrencyCode: i.CurrencyCode,
    TotalAmount: toDecimal(i.TotalAmount),
    InvoiceVatTotals: [...byRate].map(([VatRate, v]) => ({ VatRate, TotalVatAmount: toDecimal(v) })),
    TotalVatAmount: toDecimal(i.TotalVatAmount),
    TotalAmountExcludingVat: toDecimal(i.TotalAmount - i.TotalVatAmount),
    MerchantId: m.merchantId,
    InvoiceIssuerId: i.InvoiceIssuer,
    InvoiceIssuerName: issuer?.Name ?? null,
    InvoiceIssuerAddress: issuer?.Address ?? null,
    InvoiceIssuerZipcode: issuer?.ZipCode ?? null,
    InvoiceIssuerCity: issuer?.City ?? null,
    MerchantIsoCountryCode: i.CountryCode,
    LogoUrl: null,
    Status: inv.status,
    InvoiceUrl: i.InvoiceUrl,
    PaymentTransactionId: inv.paymentTransactionId,
  };
}
