import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasOpenssl } from "../testing/httpsReceiver.js";
import { invoicesHarness, USER } from "./invoices.test-support.js";

/** Invoices over HTTP: InvoiceLink invoices and the direct-invoice consents they grant or deny. */

describe.skipIf(!hasOpenssl())(
  "invoices (seed 002 §Invoices) over HTTP, callbacks to an HTTPS receiver",
  () => {
    let base: string;
    let mid: string;
    let issuer: string;
    const { call, invoice, sim, status, direct, callbacksFor, ...h } = invoicesHarness();

    beforeAll(async () => {
      ({ base, mid, issuer } = await h.start());
    });
    afterAll(async () => {
      await h.stop();
    });

    it("InvoiceLink: any app user pays through the link; the consent is granted then reused for the issuer", async () => {
      const r = await call(
        "POST",
        `/api/v1/merchants/${mid}/invoices/link`,
        invoice({ ConsumerAlias: undefined }),
      );
      expect(r.status).toBe(202);
      const { InvoiceId: id, Links } = r.body as {
        InvoiceId: string;
        Links: { Rel: string; Href: string }[];
      };
      expect(Links).toEqual([{ Rel: "user-redirect", Href: `${base}/invoices/link/${id}` }]);
      const landing = await request(Links[0]?.Href ?? "");
      expect(await landing.body.json()).toMatchObject({ InvoiceId: id, Status: "Created", TotalAmount: 125 });
      const consent = await call("POST", "/api/v1/directinvoiceconsents", { InvoiceId: id });
      expect(consent.status).toBe(201);
      const c = consent.body as { ConsentId: string; State: string; PhoneNumber: null };
      expect(c).toMatchObject({ InvoiceId: id, PhoneNumber: null, State: "Pending" });
      const early = await call("POST", `/app/usersimulation/directinvoiceconsents/${c.ConsentId}/grant`, {
        phoneNumber: "+4520031802",
      });
      expect(early.status).toBe(409);
      expect((await sim(id, "accept", { phoneNumber: "+4520031802" })).body).toMatchObject({
        Status: "Paid",
      });
      const granted = await call("POST", `/app/usersimulation/directinvoiceconsents/${c.ConsentId}/grant`, {
        phoneNumber: "+4520031802",
      });
      expect(granted.body).toMatchObject({ State: "Granted", PhoneNumber: "+4520031802" });
      expect((await call("GET", `/api/v1/directinvoiceconsents/${c.ConsentId}`)).body).toMatchObject({
        State: "Granted",
      });
      const list = await call("GET", `/api/v1/directinvoiceconsents?InvoiceIssuerId=${issuer}&State=granted`);
      expect(list.body).toEqual({ GrantedConsents: [granted.body], PagingState: null });
      expect(
        (await call("GET", `/api/v1/directinvoiceconsents?InvoiceIssuerId=${issuer}&State=pending`)).status,
      ).toBe(400);
      // Second link paid by the same user to the same issuer: the window is not shown, consent granted at once.
      const second = await call(
        "POST",
        `/api/v1/merchants/${mid}/invoices/link`,
        invoice({ ConsumerAlias: undefined }),
      );
      const id2 = (second.body as { InvoiceId: string }).InvoiceId;
      const c2 = (await call("POST", "/api/v1/directinvoiceconsents", { InvoiceId: id2 })).body as {
        ConsentId: string;
      };
      await sim(id2, "accept", { phoneNumber: "+4520031802" });
      expect((await call("GET", `/api/v1/directinvoiceconsents/${c2.ConsentId}`)).body).toMatchObject({
        State: "Granted",
      });
      // Denied by another payer.
      const third = await call(
        "POST",
        `/api/v1/merchants/${mid}/invoices/link`,
        invoice({ ConsumerAlias: undefined }),
      );
      const id3 = (third.body as { InvoiceId: string }).InvoiceId;
      const c3 = (await call("POST", "/api/v1/directinvoiceconsents", { InvoiceId: id3 })).body as {
        ConsentId: string;
      };
      await sim(id3, "accept", { phoneNumber: USER });
      const denied = await call("POST", `/app/usersimulation/directinvoiceconsents/${c3.ConsentId}/deny`, {
        phoneNumber: USER,
      });
      expect(denied.body).toMatchObject({ State: "Denied", PhoneNumber: null });
      const directId = await direct();
      const forDirect = await call("POST", "/api/v1/directinvoiceconsents", { InvoiceId: directId });
      expect(forDirect.body).toMatchObject({ error: "DomainError", error_code: "10601" });
    });
  },
);
