import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../index.js";
import { type HttpsReceiver, hasOpenssl } from "../testing/httpsReceiver.js";
import { invoicesHarness } from "./invoices.test-support.js";

/** Invoices over HTTP: batches and their callbacks, ApiKey callback auth, retries and dropped deliveries. */

describe.skipIf(!hasOpenssl())(
  "invoices (seed 002 §Invoices) over HTTP, callbacks to an HTTPS receiver",
  () => {
    let emu: Emulator;
    let rx: HttpsReceiver;
    let base: string;
    let mid: string;
    const { call, invoice, sim, status, direct, callbacksFor, ...h } = invoicesHarness();

    beforeAll(async () => {
      ({ emu, rx, base, mid } = await h.start());
    });
    afterAll(async () => {
      await h.stop();
    });

    // As in invoices.test.ts before its lifecycle tests: callbacks go to the receiver with Basic auth.
    beforeAll(async () => {
      const ok = await call("PUT", `/api/v1/merchants/${mid}/auth/basic`, {
        username: "merchant",
        password: "s3cret",
        callbackurl: `${rx.url}/invoice-callbacks`,
      });
      expect(ok.status).toBe(204);
    });

    it("batches: Rejected[] at once (10110, 10504), Invalid callback (10106) later, links by callback", async () => {
      const tooMany = await call(
        "POST",
        `/api/v1/merchants/${mid}/invoices/batch`,
        Array.from({ length: 2001 }, () => ({})),
      );
      expect(tooMany.body).toMatchObject({ error: "InputError", error_code: "10505" });
      const good = invoice();
      const unknownUser = invoice({ ConsumerAlias: { Alias: "+4599999998", AliasType: "Phone" } });
      const r = await call("POST", `/api/v1/merchants/${mid}/invoices/batch`, [
        good,
        unknownUser,
        { ...good },
        invoice({ InvoiceNumber: undefined }),
      ]);
      expect(r.status).toBe(202);
      const { Accepted, Rejected } = r.body as {
        Accepted: { InvoiceId: string; InvoiceNumber: string }[];
        Rejected: { ErrorCode: number }[];
      };
      expect(Accepted.map((a) => a.InvoiceNumber)).toEqual([good.InvoiceNumber, unknownUser.InvoiceNumber]);
      expect(Rejected.map((x) => x.ErrorCode)).toEqual([10504, 10110]);
      const [ok, invalid] = Accepted;
      await callbacksFor(ok?.InvoiceId ?? "", ["Created"]);
      const inv = await callbacksFor(invalid?.InvoiceId ?? "", ["Invalid"]);
      expect(inv.elements[0]).toMatchObject({ ErrorCode: 10106, ErrorMessage: expect.any(String) });
      expect(
        (await call("GET", `/api/v1/merchants/${mid}/invoices/${invalid?.InvoiceId}/status`)).status,
      ).toBe(404);
      const links = await call("POST", `/api/v1/merchants/${mid}/invoices/link/batch`, [
        invoice({ ConsumerAlias: undefined }),
      ]);
      const linkId = (links.body as { Accepted: { InvoiceId: string }[] }).Accepted[0]?.InvoiceId ?? "";
      const cb = await callbacksFor(linkId, ["Created"]);
      expect(cb.elements[0]).toMatchObject({
        Links: [{ Rel: "user-redirect", Href: `${base}/invoices/link/${linkId}` }],
      });
    });

    it("ApiKey callback auth; a failed delivery is retried, and dropped after 8 retries", async () => {
      expect(
        (
          await call("PUT", `/api/v1/merchants/${mid}/auth/apikey`, {
            ApiKey: "key-123",
            callbackurl: `${rx.url}/k`,
          })
        ).status,
      ).toBe(204);
      let failures = 1;
      rx.respondWith((r) => (r.path === "/k" && failures-- > 0 ? 500 : 200));
      const id = await direct();
      emu.clock.advance(5000);
      await rx.waitFor((r) => r.path === "/k" && JSON.stringify(r.json).includes(id));
      const pending = (await call("GET", "/_admin/invoices/callbacks")).body as {
        pending: { element: { InvoiceId: string }; failures: number }[];
      };
      expect(pending.pending.find((p) => p.element.InvoiceId === id)?.failures).toBe(1);
      emu.clock.advance(5000);
      const got = await rx.waitForCount(2, (r) => r.path === "/k" && JSON.stringify(r.json).includes(id));
      expect(got[1]?.headers.authorization).toBe("key-123");
      rx.respondWith(503);
      const lost = await direct();
      for (let i = 0; i < 9; i++) {
        emu.clock.advance(5000 * 2 ** i);
        await rx.waitForCount(i + 1, (r) => JSON.stringify(r.json).includes(lost));
      }
      emu.clock.advance(10 * 60_000);
      await new Promise((r) => setTimeout(r, 50));
      const admin = (await call("GET", "/_admin/invoices/callbacks")).body as {
        failed: { elements: { InvoiceId: string }[] }[];
      };
      expect(admin.failed.some((f) => f.elements.some((e) => e.InvoiceId === lost))).toBe(true);
      expect(rx.received.filter((r) => JSON.stringify(r.json).includes(lost)).length).toBe(9);
      rx.respondWith(200);
    });
  },
);
