import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../index.js";
import { type HttpsReceiver, hasOpenssl } from "../testing/httpsReceiver.js";
import { article, DAY, invoicesHarness, POOR, USER } from "./invoices.test-support.js";

/** Invoices over HTTP: auth, the invoice lifecycle (paid, rejected, canceled, expired) and validation. */

describe.skipIf(!hasOpenssl())(
  "invoices (seed 002 §Invoices) over HTTP, callbacks to an HTTPS receiver",
  () => {
    let emu: Emulator;
    let rx: HttpsReceiver;
    let mid: string;
    let issuer: string;
    const { call, invoice, sim, status, direct, callbacksFor, ...h } = invoicesHarness();

    beforeAll(async () => {
      ({ emu, rx, mid, issuer } = await h.start());
    });
    afterAll(async () => {
      await h.stop();
    });

    it("refuses a request without a valid token (401, error answer shape) and another merchant's id (403)", async () => {
      const r = await call("GET", "/api/v1/merchants/me", undefined, { authorization: "Bearer nope" });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: "InputError", error_code: "10000" });
      expect(Object.keys(r.body as object)).toEqual([
        "correlation_id",
        "error",
        "error_code",
        "error_description",
      ]);
      const other = await call(
        "GET",
        "/api/v1/merchants/00000000-0000-4000-8000-000000000000/invoiceissuers",
      );
      expect(other.status).toBe(403);
    });

    it("reads the merchant id and the issuers", async () => {
      expect(await call("GET", "/api/v1/merchants/me")).toEqual({ status: 200, body: { MerchantId: mid } });
      const r = await call("GET", `/api/v1/merchants/${mid}/invoiceissuers`);
      const list = (r.body as { InvoiceIssuers: { Status: string; AccountType: string }[] }).InvoiceIssuers;
      expect(list.map((i) => i.Status)).toEqual(["enabled", "pending", "disabled"]);
      expect(list.every((i) => i.AccountType === "Account")).toBe(true);
    });

    it("sets Basic callback auth with an https URL only", async () => {
      const http = await call("PUT", `/api/v1/merchants/${mid}/auth/basic`, {
        username: "u",
        password: "p",
        callbackurl: "http://127.0.0.1:1/cb",
      });
      expect(http.status).toBe(400);
      expect((http.body as { error_code: string }).error_code).toBe("10301");
      const ok = await call("PUT", `/api/v1/merchants/${mid}/auth/basic`, {
        username: "merchant",
        password: "s3cret",
        callbackurl: `${rx.url}/invoice-callbacks`,
      });
      expect(ok.status).toBe(204);
    });

    it("none → created (Sequence 0, Basic auth) → accepted (PaymentDate) → paid, with one ledger entry", async () => {
      const id = await direct({ PaymentReference: "REF-77" });
      const created = await callbacksFor(id, ["Created"]);
      expect(created.request?.headers.authorization).toBe(
        `Basic ${Buffer.from("merchant:s3cret").toString("base64")}`,
      );
      expect(created.elements[0]).toMatchObject({ Sequence: 0 });
      expect(String(created.elements[0]?.Date)).toMatch(/^2026-03-02T10:00:0\d\+00:00$/);
      const a = await sim(id, "accept", { phoneNumber: USER });
      expect(a).toEqual({ status: 200, body: { InvoiceId: id, Status: "Paid", PaymentDate: "2026-03-02" } });
      const cb = await callbacksFor(id, ["Created", "Accepted", "Paid"]);
      expect(cb.elements[1]).toMatchObject({ PaymentDate: "2026-03-02", Sequence: 1 });
      expect(cb.elements[2]).toMatchObject({ Sequence: 2 });
      // Seed 002: PaymentDate "only when accepted" (issue 29 defect 5): not on the Paid element.
      expect(cb.elements[2]).not.toHaveProperty("PaymentDate");
      const entries = emu.ledger().filter((e) => e.id === id);
      expect(entries).toEqual([
        expect.objectContaining({
          interface: "invoices",
          kind: "paid",
          amount: 12500,
          orderId: "REF-77",
          merchant: "DK12345678",
          point: issuer,
        }),
      ]);
      const details = await call("GET", `/api/v1/merchants/${mid}/invoices/${id}`);
      expect(details.body).toMatchObject({
        Status: "Paid",
        TotalAmount: 125,
        TotalVatAmount: 25,
        TotalAmountExcludingVat: 100,
        InvoiceVatTotals: [{ VatRate: 25, TotalVatAmount: 25 }],
        InvoiceIssuerId: issuer,
        MerchantId: mid,
      });
      expect((details.body as { PaymentTransactionId: string }).PaymentTransactionId).toMatch(/-/);
    });

    it("accepted with a future date → paid on that date; another accepted → rejected by the user", async () => {
      const later = await direct();
      const rejected = await direct();
      expect((await sim(later, "accept", { phoneNumber: USER, paymentDate: "2026-03-05" })).status).toBe(200);
      expect((await sim(rejected, "accept", { phoneNumber: USER, paymentDate: "2026-03-10" })).status).toBe(
        200,
      );
      expect(await status(later)).toBe("Accepted");
      expect(
        (await sim(rejected, "reschedule", { phoneNumber: USER, paymentDate: "2026-04-12" })).status,
      ).toBe(409);
      expect(
        (await sim(rejected, "reschedule", { phoneNumber: USER, paymentDate: "2026-04-11" })).status,
      ).toBe(200);
      expect((await sim(rejected, "reject", { phoneNumber: "+4520031802" })).status).toBe(409);
      expect((await sim(rejected, "reject", { phoneNumber: USER })).body).toMatchObject({
        Status: "Rejected",
      });
      emu.clock.advance(3 * DAY);
      expect(await status(later)).toBe("Paid");
      await callbacksFor(rejected, ["Created", "Accepted", "Rejected"]);
      await callbacksFor(later, ["Created", "Accepted", "Paid"]);
      expect((await sim(rejected, "accept", { phoneNumber: USER })).status).toBe(409);
    });

    it("created → canceled by the merchant (204); cancel of a paid invoice → 409", async () => {
      const id = await direct();
      expect((await call("PUT", `/api/v1/merchants/${mid}/invoices/${id}/cancel`)).status).toBe(204);
      expect(await status(id)).toBe("Canceled");
      const again = await call("PUT", `/api/v1/merchants/${mid}/invoices/${id}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ error: "DomainError", error_code: "10409" });
      expect((await sim(id, "accept", { phoneNumber: USER })).status).toBe(409);
      await callbacksFor(id, ["Created", "Canceled"]);
    });

    it("created → expired and accepted-but-failed → expired after DueDate + 30 days (Sequence gap)", async () => {
      const idle = await direct({
        DueDate: "2026-03-06",
        ConsumerAlias: { Alias: POOR, AliasType: "Phone" },
      });
      const failed = await direct({
        DueDate: "2026-03-06",
        ConsumerAlias: { Alias: POOR, AliasType: "Phone" },
      });
      expect((await sim(failed, "accept", { phoneNumber: POOR })).body).toMatchObject({
        Status: "Accepted",
        PaymentDate: null,
      });
      emu.clock.advance(30 * DAY);
      expect(await status(idle)).toBe("Created");
      emu.clock.advance(5 * DAY);
      expect(await status(idle)).toBe("Expired");
      const cb = await callbacksFor(failed, ["Created", "Accepted", "Expired"]);
      expect(cb.elements.map((e) => e.Sequence)).toEqual([0, 1, 3]);
      await callbacksFor(idle, ["Created", "Expired"]);
      expect(emu.ledger().filter((e) => e.id === failed)).toEqual([]);
    });

    const today = () => new Date(emu.clock.now()).toISOString().slice(0, 10);
    const plusDays = (d: number) => new Date(emu.clock.now() + d * DAY).toISOString().slice(0, 10);

    it("answers every validation failure with its code and stores nothing (the invalid outcome)", async () => {
      const bad = (b: unknown) => call("POST", `/api/v1/merchants/${mid}/invoices`, b);
      const cases: [unknown, number, string, string][] = [
        ["{", 400, "InputError", "10001"],
        [invoice({ Extra: 1 }), 400, "InputError", "10002"],
        [invoice({ InvoiceIssuer: "00000000-0000-4000-8000-000000000000" }), 400, "DomainError", "10101"],
        [invoice({ InvoiceIssuer: emu.info.invoices.issuers[1]?.id }), 400, "DomainError", "10102"],
        [invoice({ InvoiceIssuer: emu.info.invoices.issuers[2]?.id }), 400, "DomainError", "10102"],
        [invoice({ ConsumerAlias: undefined }), 400, "InputError", "10103"],
        [invoice({ ConsumerAlias: { Alias: "4520031801", AliasType: "Phone" } }), 400, "InputError", "10103"],
        [invoice({ ConsumerAlias: { Alias: USER, AliasType: "Email" } }), 400, "InputError", "10104"],
        [invoice({ TotalAmount: 0 }), 400, "InputError", "10105"],
        [invoice({ TotalAmount: 1.255 }), 400, "InputError", "10105"],
        [
          invoice({ ConsumerAlias: { Alias: "+4599999999", AliasType: "Phone" } }),
          400,
          "DomainError",
          "10106",
        ],
        [invoice({ TotalVatAmount: 200 }), 400, "InputError", "10107"],
        [invoice({ CountryCode: "SE" }), 400, "InputError", "10108"],
        [invoice({ CurrencyCode: "EUR" }), 400, "InputError", "10109"],
        [invoice({ CountryCode: "FI", CurrencyCode: "DKK" }), 400, "InputError", "10109"],
        [invoice({ InvoiceNumber: "" }), 400, "InputError", "10110"],
        [invoice({ IssueDate: "2026-02-30" }), 400, "InputError", "10111"],
        [invoice({ DueDate: plusDays(-1) }), 400, "DomainError", "10112"],
        [invoice({ DueDate: plusDays(401) }), 400, "DomainError", "10112"],
        [invoice({ PaymentReference: "x".repeat(61) }), 400, "InputError", "10113"],
        [invoice({ InvoiceUrl: "ftp://x/y.pdf" }), 400, "InputError", "10114"],
        [invoice({ InvoiceArticles: [] }), 400, "InputError", "10115"],
        [invoice({ InvoiceArticles: [{ ...article(), Unit: 3 }] }), 400, "InputError", "10116"],
        [invoice({ InvoiceArticles: [article(100, 20)] }), 400, "DomainError", "10117"],
        [invoice({ InvoiceArticles: [article(125, 25), article(0, 1, 0)] }), 400, "DomainError", "10118"],
        [invoice({ InvoiceArticles: [article(125, 25, 12)] }), 400, "DomainError", "10119"],
        [invoice({ ConsumerName: 5 }), 400, "InputError", "10120"],
        [invoice({ InvoiceNumber: "INV-1" }), 400, "DomainError", "10504"],
      ];
      const before = emu.ledger().length;
      for (const [body, st, error, code] of cases) {
        const r = await bad(body);
        expect({ code, status: r.status, body: r.body }).toMatchObject({
          code,
          status: st,
          body: { error, error_code: code },
        });
      }
      const wrongType = await call("POST", `/api/v1/merchants/${mid}/invoices`, JSON.stringify(invoice()), {
        "content-type": "text/plain",
      });
      expect(wrongType.status).toBe(415);
      expect(emu.ledger().length).toBe(before);
      expect((await bad(invoice({ DueDate: today() }))).status).toBe(202);
      expect((await bad(invoice({ DueDate: plusDays(400) }))).status).toBe(202);
      const fi = invoice({
        CountryCode: "FI",
        CurrencyCode: "EUR",
        ConsumerAlias: { Alias: "+358200318001", AliasType: "Phone" },
      });
      expect((await bad(fi)).status).toBe(202);
      expect(
        (await call("GET", `/api/v1/merchants/${mid}/invoices/00000000-0000-4000-8000-000000000000`)).status,
      ).toBe(404);
    });
  },
);
