/**
 * Company invoices end to end against the in-process emulator (seed 002 §Invoices): a company's month of
 * vends becomes one invoice whose totals equal the vends, sent once; the app user pays it through the
 * emulator's user simulation; the emulator's callback job posts to the fleet's HTTPS receiver (Basic
 * authentication) and the invoice becomes paid; a callback without valid authentication, or replayed,
 * changes nothing; overdue after the due date; invoice numbers sequential per issuer without gaps when two
 * runs go at once. Needs `openssl` (the test certificate), as the emulator's own invoice tests.
 */
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clock, ManualClock } from "../../core/clock.js";
import { seededRandom } from "../../core/random.js";
import type { Emulator } from "../../emulator/index.js";
import { hasOpenssl } from "../../emulator/testing/httpsReceiver.js";
import { InvoiceApiError, InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import type { FleetDb } from "../db/open.js";
import { callbackAuthorized } from "./callbacks.js";
import { runInvoiceCycle } from "./cycle.js";
import {
  AUTH,
  addSale,
  addUnit,
  closeInvoicesEmu,
  DAY,
  logLines,
  START,
  startInvoicesEmu,
  USER,
  until,
} from "./invoices.emu.test-support.js";
import { assignUnit, createCompany, invoicesDb, loadInvoice, loadInvoices } from "./store/invoices.js";
import { renderInvoice, renderInvoices } from "./views.js";

describe.skipIf(!hasOpenssl())("company invoices against the emulator", () => {
  let emu: Emulator;
  let app: FastifyInstance;
  let client: InvoicesClient;
  let issuer: string;
  const clock = new ManualClock(START);
  let f: { ctx: FleetContext; db: FleetDb };
  let acme: string;
  let beta: string;

  beforeAll(async () => {
    ({ emu, app, client, issuer, f, acme, beta } = await startInvoicesEmu(clock));
  });

  afterAll(async () => {
    await closeInvoicesEmu({ emu, app, client, f });
  });

  it("refuses a month that has not ended", async () => {
    await expect(runInvoiceCycle(f.ctx, client, "2026-04", START)).rejects.toThrow(/has not ended/);
  });

  it("a company's month of vends becomes one invoice whose totals equal the vends, sent once", async () => {
    const first = await runInvoiceCycle(f.ctx, client, "2026-03", START);
    expect(first.buildErrors).toEqual([]);
    expect(first.created.map((c) => [c.companyId, c.number, c.total])).toEqual([
      [acme, 1, 6 * 1500 + 4 * 1250 + 2 * 4599],
      [beta, 2, 1250],
    ]);
    expect(first.sent).toHaveLength(2);
    expect(first.byStatus).toEqual({ sent: 2 });

    const rows = await loadInvoices(f.ctx, { companyId: acme });
    const inv = rows[0];
    if (inv === undefined) throw new Error("no invoice");
    const loaded = await loadInvoice(f.ctx, inv.id);
    expect(
      loaded?.articles.map((a) => [a.article_number, a.quantity, a.unit_price, a.gross, a.vat, a.net]),
    ).toEqual([
      ["1", 6, 1500, 9000, 1800, 7200],
      ["2", 4, 1250, 5000, 1000, 4000],
      ["3", 2, 4599, 9198, 986, 8212], // 9198 × 12/112 = 985.5 → 986 (half up)
    ]);
    expect(inv.total).toBe(23_198);
    expect(inv.vat_total).toBe(1800 + 1000 + 986);
    expect([inv.issue_date, inv.due_date]).toEqual(["2026-04-02", "2026-04-16"]);

    // The service holds the same totals (its details answer), for the account's phone.
    const remote = await client.details(inv.remote_id ?? "");
    expect(remote).toMatchObject({ invoiceNumber: "1", status: "Created", total: 23_198, vatTotal: 3786 });
    const betaInv = (await loadInvoices(f.ctx, { companyId: beta }))[0];
    expect(betaInv?.link).toMatch(/^http.*\/invoices\/link\//);

    const again = await runInvoiceCycle(f.ctx, client, "2026-03", START + 60_000);
    expect(again.created).toEqual([]);
    expect(again.sent).toEqual([]);
    expect(again.byStatus).toEqual({ sent: 2 });
  });

  it("paid through the emulator's user simulation: the callback marks it paid; bad auth and replays change nothing", async () => {
    const inv = (await loadInvoices(f.ctx, { companyId: acme }))[0];
    const remoteId = inv?.remote_id ?? "";
    const base = emu.info.invoices.baseUrl;
    const pay = await request(`${base}/app/usersimulation/invoices/${remoteId}/accept`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ phoneNumber: USER }),
    });
    expect(pay.statusCode).toBe(200);
    await pay.body.dump();
    const db = invoicesDb(f.ctx);
    const statusOf = async () =>
      await db.selectFrom("invoices").selectAll().where("remote_id", "=", remoteId).executeTakeFirstOrThrow();
    expect((await statusOf()).status).toBe("sent"); // nothing polled: only the callback can change it

    clock.advance(1000);
    emu.clock.advance(5000); // the callback job
    await until(async () => (await statusOf()).status === "paid", "the Paid callback");
    const paid = await statusOf();
    expect(paid).toMatchObject({ status: "paid", remote_status: "Paid", payment_date: "2026-04-02" });

    // What the emulator delivered, with the header it used.
    const admin = await request(`${base}/_admin/invoices/callbacks`);
    const delivered = ((await admin.body.json()) as { delivered: { elements: unknown[] }[] }).delivered;
    const elements = delivered.flatMap((d) => d.elements) as { InvoiceId: string; Status: string }[];
    expect(elements.filter((e) => e.InvoiceId === remoteId).map((e) => e.Status)).toEqual([
      "Created",
      "Accepted",
      "Paid",
    ]);

    const post = async (body: unknown, authorization?: string) => {
      const r = await app.inject({
        method: "POST",
        url: "/invoices/callbacks",
        headers: {
          "content-type": "application/json",
          ...(authorization === undefined ? {} : { authorization }),
        },
        payload: JSON.stringify(body),
      });
      return { status: r.statusCode, body: r.json() as Record<string, number> };
    };
    const betaInv = (await loadInvoices(f.ctx, { companyId: beta }))[0];
    const betaRemote = betaInv?.remote_id ?? "";
    const forged = [
      { InvoiceId: betaRemote, Status: "Paid", Date: "2026-04-02T10:00:01+00:00", Sequence: 5 },
    ];
    const before = await db.selectFrom("invoices").selectAll().orderBy("number").execute();
    const seen = await db.selectFrom("invoice_callbacks").selectAll().execute();
    expect((await post(forged)).status).toBe(401);
    expect((await post(forged, "Basic ZmxlZXQ6d3Jvbmc=")).status).toBe(401); // fleet:wrong
    expect((await post(forged, `Bearer ${AUTH.password}`)).status).toBe(401);
    expect((await post(forged, "cb-secret-5f1e9a")).status).toBe(401); // the password as an ApiKey
    const basic = `Basic ${Buffer.from(`${AUTH.username}:${AUTH.password}`).toString("base64")}`;
    const replay = await post(elements, basic);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ applied: 0, replayed: elements.length });
    expect(await db.selectFrom("invoices").selectAll().orderBy("number").execute()).toEqual(before);
    expect(await db.selectFrom("invoice_callbacks").selectAll().execute()).toEqual(seen);
    expect((await post({ not: "an array" }, basic)).status).toBe(400);
  });

  it("shows paid, unpaid and overdue: past its due date an open invoice is overdue; pages escape names", async () => {
    const later = START + 12 * DAY; // Beta's due date (issue + 10 days) has passed
    const r = await runInvoiceCycle(f.ctx, client, "2026-03", later);
    expect(r.created).toEqual([]);
    expect(r.sent).toEqual([]);
    expect(r.overdue).toBe(1);
    expect(r.byStatus).toEqual({ paid: 1, overdue: 1 });
    const list = renderInvoices(await loadInvoices(f.ctx)).value;
    expect(list).toContain("paid 1 · unpaid 0 · overdue 1");
    expect(list).not.toContain("<script>");
    expect(list).toContain("Acme &lt;script&gt;");
    const acmeInv = (await loadInvoices(f.ctx, { companyId: acme }))[0];
    const page = await loadInvoice(f.ctx, acmeInv?.id ?? "");
    if (page === null) throw new Error("no invoice");
    const body = renderInvoice(page.invoice, page.articles).value;
    expect(body).toContain("Tea &lt;green&gt;");
    expect(body).toContain("<th>194.12</th><th>37.86</th><th>231.98</th>");
  });

  it("a lost create answer: the repeat is refused as a duplicate, nothing is billed twice, the id is learnt from the callback; a refused invoice is unpaid", async () => {
    const { ctx } = f;
    const later = START + 12 * DAY;
    const gamma = await createCompany(ctx, {
      name: "Gamma",
      orgNumber: "DK11110000",
      delivery: "direct",
      phone: USER,
      issuerId: issuer,
    });
    await assignUnit(ctx, gamma, "u4"); // 7 coffee in March
    await addUnit(ctx, "u5");
    const delta = await createCompany(ctx, {
      name: "Zeta",
      orgNumber: "DK22220000",
      delivery: "direct",
      phone: "+4599999999", // not an app user: the service refuses the invoice
      issuerId: issuer,
    });
    await assignUnit(ctx, delta, "u5");
    await addSale(ctx, "u5", "2026-03-12", 2, 2);
    // The first create POST is applied by the service, then the connection is reset (no answer).
    emu.faults.add({ method: "POST", path: "/api/v1/merchants/*/invoices", fault: "reset", applied: true });
    const instant: Clock = {
      now: () => later,
      setTimer: (_ms, fn) => {
        setImmediate(fn);
        return { cancel() {} };
      },
      sleep: async () => {},
    };
    const retrying = new InvoicesClient({
      baseUrl: emu.info.invoices.baseUrl,
      accessToken: () => emu.info.invoices.accessToken,
      clock: instant,
      random: seededRandom(9),
    });
    try {
      const r = await runInvoiceCycle(ctx, retrying, "2026-03", later);
      expect(r.created.map((c) => [c.companyId, c.number, c.total])).toEqual([
        [gamma, 3, 7 * 1500],
        [delta, 4, 2500],
      ]);
      expect(r.sendErrors.map((e) => e.reason)).toEqual([
        expect.stringMatching(/10504/),
        expect.stringMatching(/10106/),
      ]);
    } finally {
      await retrying.close();
    }
    const db = invoicesDb(ctx);
    const row = (id: string) =>
      db.selectFrom("invoices").selectAll().where("company_id", "=", id).executeTakeFirstOrThrow();
    expect(await row(delta)).toMatchObject({ status: "unpaid", remote_id: null });
    expect((await row(delta)).note).toMatch(/not an app user/);
    expect(await row(gamma)).toMatchObject({ status: "sent", remote_id: null });

    emu.clock.advance(5000); // the callback job: Gamma's Created callback
    await until(async () => (await row(gamma)).remote_id !== null, "Gamma's callback");
    const g = await row(gamma);
    expect(g).toMatchObject({ status: "sent", remote_status: "Created", note: null, last_sequence: 0 });
    expect(await client.details(g.remote_id ?? "")).toMatchObject({ invoiceNumber: "3", total: 10_500 });
    // The repeat was refused (10504 above): the service created the invoice once.
    const admin = await request(`${emu.info.invoices.baseUrl}/_admin/invoices/callbacks`);
    const delivered = (
      (await admin.body.json()) as { delivered: { elements: { InvoiceId: string; Status: string }[] }[] }
    ).delivered;
    const created = delivered.flatMap((d) => d.elements).filter((e) => e.Status === "Created");
    expect(created.filter((e) => e.InvoiceId === g.remote_id)).toHaveLength(1);

    const again = await runInvoiceCycle(ctx, client, "2026-03", later + 60_000);
    expect([again.created, again.sent, again.sendErrors]).toEqual([[], [], []]);
  });

  it("secrets never in logs or errors: the callback password, the Basic header and the access token", async () => {
    const bad = new InvoicesClient({
      baseUrl: emu.info.invoices.baseUrl,
      accessToken: () => "canary-token-0c5e",
      clock,
      random: seededRandom(1),
    });
    try {
      const e = await bad.merchantId().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(InvoiceApiError);
      expect((e as InvoiceApiError).status).toBe(401);
      expect(String(e)).not.toContain("canary-token-0c5e");
      expect(JSON.stringify(e)).not.toContain("canary-token-0c5e");
    } finally {
      await bad.close();
    }
    const all = logLines.join("");
    expect(logLines.length).toBeGreaterThan(5);
    const basic = Buffer.from(`${AUTH.username}:${AUTH.password}`).toString("base64");
    for (const secret of [AUTH.password, basic, emu.info.invoices.accessToken])
      expect(all).not.toContain(secret);
  });

  it("callback authentication: Basic and ApiKey compared exactly", () => {
    const basic = `Basic ${Buffer.from("fleet:cb-secret-5f1e9a").toString("base64")}`;
    expect(callbackAuthorized(basic, AUTH)).toBe(true);
    expect(callbackAuthorized(`${basic} `, AUTH)).toBe(false);
    expect(callbackAuthorized(undefined, AUTH)).toBe(false);
    const key = { kind: "apikey" as const, key: "k3y-abc.DEF~1" };
    expect(callbackAuthorized("k3y-abc.DEF~1", key)).toBe(true);
    expect(callbackAuthorized("Bearer k3y-abc.DEF~1", key)).toBe(false);
    expect(callbackAuthorized("k3y-abc.DEF~2", key)).toBe(false);
  });
});
