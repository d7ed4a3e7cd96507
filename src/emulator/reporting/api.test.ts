import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReportingKit as Kit, type ReportingKit, recordViaLedger } from "./testkit.test-support.js";

/**
 * The reporting routes over HTTP (seed 002 "Endpoints / Reporting"): the three headers, payment points and
 * ownership, parameters, page tokens, transfer references and contents (v1, v2, CSV), invoiced fees and the
 * carry-over of a day without a positive net. Every status the emulator answers is tested here.
 */
const FI_STORE = "44444444-4444-4444-8444-444444444444";

describe("transaction reporting routes", () => {
  let kit: ReportingKit;
  let point: string;
  beforeAll(async () => {
    kit = await Kit.start({
      startTime: Date.parse("2026-11-24T10:00:00Z"),
      seed: {
        integrators: [{ clientId: "other-client", clientSecret: "other-secret" }],
        merchants: [
          {
            vat: "FI11223344",
            stores: [{ storeId: FI_STORE, merchantBrandId: "POSFI22222", merchantLocationId: "00002" }],
          },
        ],
      },
    });
    point = kit.emu.info.reporting.paymentPointId;
    await kit.login();
  });
  afterAll(() => kit.close());

  const day = { from: "2026-11-24T00:00:00Z", to: "2026-11-25T00:00:00Z" };

  it("the three headers: gateway client pair 401 invalid_client, bearer 401 invalid_token", async () => {
    const path = "/v1/paymentpoints";
    const overs: Record<string, string | null>[] = [
      { "x-gateway-client-id": null },
      { "x-gateway-client-secret": null },
      { "x-gateway-client-secret": "wrong" },
    ];
    for (const over of overs) {
      const r = await kit.get(path, {}, over);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: "invalid_client", error_description: expect.any(String) });
    }
    for (const over of [
      { authorization: null },
      { authorization: "Bearer nope" },
      { authorization: "Basic eDp5" },
    ]) {
      const r = await kit.get(path, {}, over);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: "invalid_token" });
      expect(r.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    }
    // A token used with another client's headers.
    const other = await kit.get(
      path,
      {},
      { "x-gateway-client-id": "other-client", "x-gateway-client-secret": "other-secret" },
    );
    expect(other.status).toBe(401);
    expect(other.body).toMatchObject({ error: "invalid_token" });
  });

  it("payment points are the token's merchant's; another merchant's point is 404", async () => {
    const mine = await kit.get("/v1/paymentpoints");
    expect(mine.body).toEqual({
      merchantId: "DK12345678",
      merchantName: "Emulator Merchant A/S",
      paymentPoints: [{ paymentPointId: point, paymentPointName: "Emulator Store" }],
    });
    const r = await kit.get(`/v1/paymentpoints/${FI_STORE}/transactions`, day);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: "not_found" });
    const fi = Kit.on(kit.emu);
    await fi.login("FI11223344");
    expect((await fi.get("/v1/paymentpoints")).body).toMatchObject({
      merchantId: "FI11223344",
      paymentPoints: [{ paymentPointId: FI_STORE, paymentPointName: "Store 00002" }],
    });
    await fi.close();
  });

  it("unknown routes 404, other methods 405", async () => {
    expect((await kit.get("/v1/paymentpoints/x/other")).status).toBe(404);
    expect((await kit.get("/v3/paymentpoints")).status).toBe(404);
    expect((await kit.get(`/v2/paymentpoints/${point}/transactions`, day)).status).toBe(404);
    const post = await kit.raw("POST", `${kit.emu.info.reporting.baseUrl}/v1/paymentpoints`, kit.headers());
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET");
  });

  it("transactions: from and to are required date-times with to after from (400 otherwise)", async () => {
    const path = `/v1/paymentpoints/${point}/transactions`;
    const bad: Record<string, string>[] = [
      {},
      { from: day.from },
      { from: "2026-11-24", to: day.to },
      { from: "2026-13-01T00:00:00Z", to: day.to },
      { from: day.to, to: day.from },
      { from: day.from, to: day.from },
    ];
    for (const q of bad) {
      const r = await kit.get(path, q);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_request" });
    }
    const twice = await kit.raw(
      "GET",
      `${kit.emu.info.reporting.baseUrl}${path}?from=${day.from}&from=${day.from}&to=${day.to}`,
      kit.headers(),
    );
    expect(twice.status).toBe(400);
    const offset = await kit.get(path, { from: "2026-11-24T01:00:00+01:00", to: day.to });
    expect(offset.status).toBe(200);
  });

  it("a day's lines, their fields, fees and the empty last page", async () => {
    const e = recordViaLedger(kit.emu, "online", "captured", 10_000, {
      merchant: "DK12345678",
      point,
      orderId: "order-77",
    });
    const r = await kit.get(`/v1/paymentpoints/${point}/transactions`, day);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      merchantId: "DK12345678",
      merchantName: "Emulator Merchant A/S",
      paymentPointId: point,
      paymentPointName: "Emulator Store",
      receiverAccount: "DK5000401234567800",
      transactions: [
        {
          type: "Payment",
          amount: 100,
          currencyCode: "DKK",
          timestamp: "2026-11-24T10:00:00Z",
          paymentTransactionId: String(7_000_000_000 + e.seq),
          externalTransactionId: "order-77",
          transferReference: null,
          transferReferenceDate: null,
        },
        {
          type: "TransactionFee",
          amount: -1.25,
          currencyCode: "DKK",
          timestamp: "2026-11-24T10:00:00Z",
          paymentTransactionId: String(7_000_000_000 + e.seq),
          externalTransactionId: "order-77",
          transferReference: null,
          transferReferenceDate: null,
        },
      ],
      nextPageToken: null,
    });
    const empty = await kit.get(`/v1/paymentpoints/${point}/transactions`, {
      from: "2026-11-23T00:00:00Z",
      to: "2026-11-24T00:00:00Z",
    });
    expect(empty.body).toMatchObject({ transactions: [], nextPageToken: null });
  });

  it("page tokens: base64 with /, + and =; refused 400 when not URL-encoded, altered or of another query", async () => {
    for (let i = 0; i < 1100; i++)
      recordViaLedger(kit.emu, "invoices", "paid", 100 + i, { merchant: "DK12345678", point });
    kit.emu.reporting.setFeesInvoiced("DK12345678", false);
    const path = `/v1/paymentpoints/${point}/transactions`;
    const first = await kit.get(path, day);
    const token = (first.body as { nextPageToken: string }).nextPageToken;
    expect(token).toMatch(/^\+\/\+\/[A-Za-z0-9+/]{14}==$/);
    expect((await kit.get(path, { ...day, pageToken: token })).status).toBe(200);
    // Not URL-encoded: `+` arrives as a space.
    const raw = await kit.raw(
      "GET",
      `${kit.emu.info.reporting.baseUrl}${path}?from=${day.from}&to=${day.to}&pageToken=${token}`,
      kit.headers(),
    );
    expect(raw.status).toBe(400);
    expect(raw.body).toMatchObject({
      error: "invalid_request",
      error_description: expect.stringContaining("URL-encoded"),
    });
    const altered = `${token.slice(0, 10)}${token[10] === "A" ? "B" : "A"}${token.slice(11)}`;
    expect((await kit.get(path, { ...day, pageToken: altered })).status).toBe(400);
    expect((await kit.get(path, { ...day, pageToken: "garbage" })).status).toBe(400);
    const other = await kit.get(path, { from: day.from, to: "2026-11-24T23:00:00Z", pageToken: token });
    expect(other.status).toBe(400);
  });

  it("transfer-references: dates required and ordered (400); none before the cut-off", async () => {
    const path = `/v1/paymentpoints/${point}/transfer-references`;
    const bad: Record<string, string>[] = [
      {},
      { from: "2026-11-24" },
      { from: "2026-11-24", to: "2026-02-30" },
      { from: "2026-11-25", to: "2026-11-24" },
    ];
    for (const q of bad) {
      expect((await kit.get(path, q)).status).toBe(400);
    }
    expect((await kit.get(path, { from: "2026-11-24", to: "2026-11-30" })).body).toEqual({
      transferReferences: [],
    });
  });

  it("transfer contents v1, v2 JSON and CSV; unknown reference 404; Accept neither JSON nor CSV 406", async () => {
    const made = kit.emu.reporting.advanceToCutoff();
    expect(made.map((t) => [t.paymentPointId, t.transferReferenceDate])).toEqual([[point, "2026-11-25"]]);
    await kit.refresh();
    const refs = await kit.get(`/v1/paymentpoints/${point}/transfer-references`, {
      from: "2026-11-25",
      to: "2026-11-25",
    });
    const ref = (refs.body as { transferReferences: { transferReference: string }[] }).transferReferences[0]
      ?.transferReference as string;
    const v1 = await kit.get(`/v1/paymentpoints/${point}/transfers/${ref}`);
    expect(v1.body).toMatchObject({
      merchantId: "DK12345678",
      paymentPointId: point,
      transferReference: ref,
      transferReferenceDate: "2026-11-25",
      receiverAccount: "DK5000401234567800",
      nextPageToken: expect.stringMatching(/^\+\/\+\//),
    });
    const first = (v1.body as { transactions: Record<string, unknown>[] }).transactions[0];
    expect(Object.keys(first ?? {})).toEqual([
      "type",
      "amount",
      "currencyCode",
      "timestamp",
      "paymentTransactionId",
      "externalTransactionId",
    ]);
    const v2 = await kit.get(`/v2/paymentpoints/${point}/transfers/${ref}`);
    expect(v2.body).toMatchObject({
      companyRegNo: "12345678",
      transferReference: ref,
      paymentPointName: "Emulator Store",
    });
    expect((v2.body as { transactions: unknown[] }).transactions[0]).toEqual({
      type: "Payment",
      amount: 100,
      currencyCode: "DKK",
      timestamp: "2026-11-24T10:00:00Z",
      message: null,
      merchantReference: "order-77",
      merchantPaymentLabel: null,
      paymentTransactionId: expect.any(String),
      userIndicator: null,
      loyaltyId: null,
      myshopNumber: null,
      brandName: null,
      brandId: null,
      locationId: null,
      posName: null,
      beaconId: null,
      merchantPayerReference: null,
      agreementId: null,
    });
    const csv = await kit.get(`/v2/paymentpoints/${point}/transfers/${ref}`, {}, { accept: "text/csv" });
    const rows = csv.text.split("\r\n");
    expect(rows[1]).toMatch(
      new RegExp(
        `^12345678,Emulator Merchant A/S,${point},Emulator Store,${ref},2026-11-25,DK5000401234567800,Payment,100.00,DKK,2026-11-24T10:00:00Z,,order-77,,\\d+,,,,,,,,,,$`,
      ),
    );
    expect(rows[2]).toMatch(/,TransactionFee,-1.25,DKK,/);
    expect(
      (await kit.get(`/v2/paymentpoints/${point}/transfers/${ref}`, {}, { accept: "application/xml" }))
        .status,
    ).toBe(406);
    expect((await kit.get(`/v1/paymentpoints/${point}/transfers/nope`)).status).toBe(404);
    expect((await kit.get(`/v2/paymentpoints/${point}/transfers/nope`)).status).toBe(404);
  });

  it("fees the merchant has invoiced are neither deducted nor visible", async () => {
    const res = await kit.admin("PUT", "/reporting/merchants/DK12345678/fees", { invoiced: true });
    expect(res.body).toEqual({ merchantId: "DK12345678", feesInvoiced: true });
    kit.emu.clock.advance(3600_000);
    recordViaLedger(kit.emu, "subscriptions", "paid", 5_000, { merchant: "DK12345678", point });
    recordViaLedger(kit.emu, "subscriptions", "refunded", 1_000, { merchant: "DK12345678", point });
    const made = await kit.admin("POST", "/reporting/advance-to-cutoff", { count: 1 });
    expect((made.body as { transfers: unknown[] }).transfers).toMatchObject([
      { paymentPointId: point, amount: 40 },
    ]);
    await kit.refresh();
    const lines = await kit.get(`/v1/paymentpoints/${point}/transactions`, {
      from: "2026-11-25T00:00:00Z",
      to: "2026-11-26T00:00:00Z",
    });
    expect((lines.body as { transactions: { type: string }[] }).transactions.map((t) => t.type)).toEqual([
      "Payment",
      "Refund",
    ]);
    await kit.admin("PUT", "/reporting/merchants/DK12345678/fees", { invoiced: false });
    expect((await kit.admin("PUT", "/reporting/merchants/DK12345678/fees", { invoiced: "yes" })).status).toBe(
      400,
    );
  });

  it("a day whose net is not positive makes no transfer; it is carried into the next day's", async () => {
    const p = randomUUID();
    kit.emu.clock.advance(3600_000);
    recordViaLedger(kit.emu, "online", "refunded", 3_000, { merchant: "DK12345678", point: p });
    const none = kit.emu.reporting.advanceToCutoff();
    expect(none.filter((t) => t.paymentPointId === p)).toEqual([]);
    recordViaLedger(kit.emu, "online", "captured", 10_000, { merchant: "DK12345678", point: p });
    const next = kit.emu.reporting.advanceToCutoff();
    // 100.00 − 1.25 fee − 30.00 carried refund.
    expect(next.filter((t) => t.paymentPointId === p)).toMatchObject([{ amount: 6875, transactions: 3 }]);
  });

  it("admin: transfers and merchants listed; bad advance count 400; unknown admin route 404", async () => {
    const t = await kit.admin("GET", "/reporting/transfers");
    expect((t.body as { transfers: unknown[] }).transfers.length).toBeGreaterThanOrEqual(3);
    const m = await kit.admin("GET", "/reporting/merchants");
    expect((m.body as { merchants: { merchantId: string; currency: string }[] }).merchants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ merchantId: "DK12345678", currency: "DKK" }),
        expect.objectContaining({ merchantId: "FI11223344", currency: "EUR" }),
      ]),
    );
    expect((await kit.admin("POST", "/reporting/advance-to-cutoff", { count: 0 })).status).toBe(400);
    expect((await kit.admin("POST", "/reporting/advance-to-cutoff", { count: "x" })).status).toBe(400);
    expect((await kit.admin("GET", "/reporting/nothing")).status).toBe(404);
  });
});
