import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoicesHarness } from "../invoices/invoices.test-support.js";
import { o, SubsKit } from "../subscriptions/testkit.test-support.js";

/**
 * Issue 29 defect 3: the seeds' maximum batch sizes fit the routes' body limits on an emulator with default
 * options: 2000 subscription payment requests (seed 000: 202) and a batch of 2000 invoices (seed 002: 202);
 * one element more gets the seed's own refusal, not 413; an absurd body still gets 413 (from its declared
 * length, before any of it is read), and so does a body above the default limit on any other route.
 */

/** Sends only the head of a POST declaring `length` bytes; resolves the status line the server answers. */
function declare(origin: string, path: string, length: number): Promise<string> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
      );
    });
    let text = "";
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1");
      if (text.includes("\r\n")) {
        resolve(text.slice(0, text.indexOf("\r\n")));
        socket.destroy();
      }
    });
    socket.on("error", reject);
  });
}

describe("body limits fit the seeds' largest batches (issue 29, defect 3)", () => {
  describe("subscriptions: payment requests", () => {
    let kit: SubsKit;
    let agreement: string;
    beforeAll(async () => {
      kit = await SubsKit.start({ bodyLimitBytes: undefined }); // the default limit (64 KiB)
      await kit.useReceiver();
      agreement = await kit.activeAgreement();
    });
    afterAll(() => kit.close());

    const items = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        kit.payment(agreement, {
          external_id: `inv-${String(i).padStart(5, "0")}`,
          description: `Monthly coffee subscription, invoice ${i}`,
        }),
      );

    it("2000 payment requests in one call: 202 with 2000 pending", async () => {
      const list = items(2000);
      expect(JSON.stringify(list).length).toBeGreaterThan(64 * 1024);
      const r = await kit.requestPayments(list);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(202);
      expect(o(r.body).pending_payments).toHaveLength(2000);
    });

    it("2001: the seed's refusal (400, at most 2000), not 413", async () => {
      const r = await kit.requestPayments(items(2001));
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain("at most 2000");
    });

    it("an absurd body (1 GiB declared) and an oversized single request: 413", async () => {
      const origin = kit.emu.info.subscriptions.baseUrl;
      expect(await declare(origin, `/api/providers/${kit.pid}/paymentrequests`, 1024 ** 3)).toMatch(/ 413 /);
      expect(await declare(origin, "/v10/payments", 70 * 1024)).toMatch(/ 413 /);
    });
  });

  describe("invoices: batches", () => {
    const h = invoicesHarness();
    let mid = "";
    let base = "";
    beforeAll(async () => {
      ({ mid, base } = await h.start()); // default options: the default limit (64 KiB)
    });
    afterAll(() => h.stop());

    it("a batch of 2000 invoices (direct and link): 202 with 2000 accepted", async () => {
      for (const route of ["invoices/batch", "invoices/link/batch"]) {
        const batch = Array.from({ length: 2000 }, () => h.invoice());
        expect(JSON.stringify(batch).length).toBeGreaterThan(64 * 1024);
        const r = await h.call("POST", `/api/v1/merchants/${mid}/${route}`, batch);
        expect(r.status, route).toBe(202);
        expect(o(r.body).Accepted).toHaveLength(2000);
      }
    });

    it("2001 invoices: the seed's batch refusal (10505), not 413", async () => {
      const r = await h.call(
        "POST",
        `/api/v1/merchants/${mid}/invoices/batch`,
        Array.from({ length: 2001 }, () => h.invoice()),
      );
      expect(r.status).toBe(400);
      expect(o(r.body).error_code).toBe("10505");
    });

    it("a single invoice of 1000 articles fits; an absurd batch (1 GiB declared): 413", async () => {
      const articles = Array.from({ length: 1000 }, () => ({
        ArticleNumber: "A-1",
        ArticleDescription: "Coffee beans",
        VATRate: 25,
        TotalVATAmount: 0.2,
        TotalPriceIncludingVat: 1,
        Unit: "kg",
        Quantity: 1,
        PricePerUnit: 1,
        PriceReduction: 0,
        PriceDiscount: 0,
        Bonus: 0,
      }));
      const one = h.invoice({ TotalAmount: 1000, TotalVatAmount: 200, InvoiceArticles: articles });
      expect(JSON.stringify(one).length).toBeGreaterThan(64 * 1024);
      const r = await h.call("POST", `/api/v1/merchants/${mid}/invoices`, one);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      expect(await declare(base, `/api/v1/merchants/${mid}/invoices/batch`, 1024 ** 3)).toMatch(/ 413 /);
    });
  });
});
