import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DK_USER, o, SubsKit } from "../subscriptions/testkit.js";
import { type HttpsReceiver, hasOpenssl, startHttpsReceiver } from "../testing/httpsReceiver.js";
import type { LedgerEntry } from "../types.js";
import { V10Kit } from "../v10/testkit.js";
import { ReportingKit as Kit, type ReportingKit } from "./testkit.js";

/**
 * The one-day ledger test (issue 15 acceptance): a day of point-of-sale vends through both interfaces' HTTP
 * APIs (refunds, partial captures), subscription charges, one-off payments and a refund, invoice payments and
 * online-payment captures and a refund, each through its interface's HTTP API; the day's report lists each
 * exactly once, the next day's transfer is the day's sales net of refunds and fees, and pages of 1000 with
 * tokens carrying `/`, `+` and `=` walk it completely.
 */

const DAY_START = Date.parse("2026-11-24T00:00:00Z");
const DAY_END = Date.parse("2026-11-25T00:00:00Z");
/** Independent restatement of the documented fee schedule (basis points per interface, half up). */
const BP: Record<string, number> = { v10: 75, legacy: 75, subscriptions: 100, invoices: 100, online: 125 };
const fee = (e: LedgerEntry): number => Math.floor((e.amount * (BP[e.interface] ?? 0) + 5000) / 10_000);
const MONEY = new Set(["paid", "captured", "refunded"]);
/** Subscription charges requested the day before, in one payment-request array, executed on the day. */
const CHARGES = 1500;

interface Line {
  type: string;
  amount: number;
  paymentTransactionId: string;
  transferReference?: string | null;
  externalTransactionId?: string;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: the one-day ledger test (HTTPS callbacks) skipped");

describe.skipIf(skip)("one day through the one ledger (issue 15 acceptance)", () => {
  const merchant = "DK12345678";
  let v10: V10Kit;
  let kit: ReportingKit;
  let rx: HttpsReceiver;
  let subs: SubsKit;
  let subsPoint = "";
  let invoicePoint = "";
  let onlinePoint = "";
  let points: string[] = [];
  const lines = new Map<string, Line[]>();

  /** A JSON call on the emulator's origin (invoices: bearer token; online payments: gateway headers). */
  async function json(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Answer> {
    const r = await kit.raw(
      method,
      `${v10.emu.info.v10.baseUrl}${path}`,
      body === undefined ? headers : { ...headers, "content-type": "application/json" },
      body === undefined ? undefined : JSON.stringify(body),
    );
    return { status: r.status, body: o(r.body) };
  }

  /** An invoice of one article at 25 % VAT, paid by the app user at once; returns its id. */
  async function paidInvoice(
    invoiceNumber: string,
    total: number,
    paymentReference?: string,
  ): Promise<string> {
    const { merchantId, accessToken } = v10.emu.info.invoices;
    const auth = { authorization: `Bearer ${accessToken}` };
    const vat = Math.round((total * 25) / 125);
    const today = new Date(v10.emu.clock.now()).toISOString().slice(0, 10);
    const created = await json("POST", `/api/v1/merchants/${merchantId}/invoices`, auth, {
      InvoiceIssuer: invoicePoint,
      ConsumerAlias: { Alias: DK_USER, AliasType: "Phone" },
      TotalAmount: total / 100,
      TotalVatAmount: vat / 100,
      CountryCode: "DK",
      CurrencyCode: "DKK",
      InvoiceNumber: invoiceNumber,
      ...(paymentReference === undefined ? {} : { PaymentReference: paymentReference }),
      IssueDate: today,
      OrderDate: today,
      DeliveryDate: today,
      DueDate: new Date(v10.emu.clock.now() + 10 * 86_400_000).toISOString().slice(0, 10),
      InvoiceArticles: [
        {
          ArticleNumber: "A-1",
          ArticleDescription: "Coffee beans",
          VATRate: 25,
          TotalVATAmount: vat / 100,
          TotalPriceIncludingVat: total / 100,
          Unit: "kg",
          Quantity: 1,
          PricePerUnit: total / 100,
          PriceReduction: 0,
          PriceDiscount: 0,
          Bonus: 0,
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const id = String(created.body.InvoiceId);
    const paid = await json("POST", `/app/usersimulation/invoices/${id}/accept`, auth, {
      phoneNumber: DK_USER,
    });
    expect(paid).toMatchObject({ status: 200, body: { InvoiceId: id, Status: "Paid" } });
    return id;
  }

  beforeAll(async () => {
    rx = await startHttpsReceiver();
    // The day before, at noon: the subscription charges are requested for the day (at least a day ahead).
    v10 = await V10Kit.start({
      timeSource: () => 0,
      startTime: Date.parse("2026-11-23T12:00:00Z"),
      bodyLimitBytes: 1024 * 1024,
      callbackCa: rx.ca,
      callbackAllowLoopbackPorts: true,
      subscriptions: { callbackCa: rx.ca, callbackAllowLoopbackPorts: true },
    });
    kit = Kit.on(v10.emu);
    const emu = v10.emu;
    subs = await SubsKit.on(emu, rx);
    subsPoint = subs.pid;
    invoicePoint = emu.info.invoices.issuers.find((i) => i.status === "enabled")?.id ?? "";
    await subs.useReceiver();
    const agreement = await subs.activeAgreement(DK_USER);
    const requested = await subs.requestPayments(
      Array.from({ length: CHARGES }, (_, i) =>
        subs.payment(agreement, {
          amount: (4900 + (i % 7) * 100) / 100,
          due_date: "2026-11-24",
          external_id: `sub-${i}`,
        }),
      ),
    );
    expect(requested.status).toBe(202);
    const charges = (o(requested.body).pending_payments as Record<string, unknown>[]).map((p) =>
      String(p.payment_id),
    );
    expect(charges).toHaveLength(CHARGES);
    // Validation now; the charges run after 03:15 on their due date, the point of sale opens at 06:00.
    emu.clock.advance(120_000);
    emu.clock.advance(Date.parse("2026-11-24T06:00:00Z") - emu.clock.now());
    await v10.refreshToken();
    expect(emu.ledger().filter((e) => e.interface === "subscriptions" && e.kind === "paid")).toHaveLength(
      CHARGES,
    );

    // V10 point of sale: full capture, partial capture, capture + partial refund, a cancelled reservation.
    const { posId, beaconId } = await v10.createPos();
    const capture = (p: string, amount: number) =>
      v10.call("POST", `/v10/payments/${p}/capture`, { body: { amount } });
    const p1 = await v10.reserved(posId, beaconId, 20);
    expect((await capture(p1, 20)).status).toBe(200);
    const p2 = await v10.reserved(posId, beaconId, 30);
    expect((await capture(p2, 12.5)).status).toBe(200);
    const p3 = await v10.reserved(posId, beaconId, 15);
    expect((await capture(p3, 15)).status).toBe(200);
    const refund = await v10.call("POST", "/v10/refunds", {
      body: { paymentId: p3, refundOrderId: randomUUID(), amount: 5, currencyCode: "DKK" },
    });
    const refundId = (refund.body as { refundId: string }).refundId;
    emu.clock.advance(200);
    expect((await v10.call("POST", `/v10/refunds/${refundId}/capture`)).status).toBe(200);
    const p4 = await v10.reserved(posId, beaconId, 9);
    expect((await v10.call("POST", `/v10/payments/${p4}/cancel`)).status).toBe(200);

    // Older interface: a payment with a partial refund, a reservation captured partially.
    const unit = "100000000000001";
    const pos = { PoSId: "vm-legacy-1" };
    expect((await kit.legacy("RegisterPoS", { ...pos, Name: "Legacy vending" })).status).toBe(200);
    expect((await kit.legacy("AssignPoSUnitIdToPos", { ...pos, PoSUnitId: unit })).status).toBe(200);
    const start = await kit.legacy("PaymentStart", {
      ...pos,
      OrderId: "L-1",
      Amount: "10.00",
      BulkRef: "",
      Action: "Start",
      CustomerTokenCalc: 1,
      HMAC: kit.legacyHmac(pos.PoSId, "L-1", "10.00"),
    });
    expect(start.status).toBe(200);
    emu.userSimulation.checkin(unit, "+4520031801");
    expect(emu.userSimulation.accept(unit, "+4520031801").status).toBe(200);
    emu.clock.advance(10_000);
    const refunded = await kit.legacy("PaymentRefund", {
      ...pos,
      OrderId: "L-1",
      Amount: "2.50",
      BulkRef: "",
    });
    expect(refunded.body).toMatchObject({ Remainder: 7.5 });
    const reserve = await kit.legacy("ReservationStart", {
      ...pos,
      OrderId: "R-1",
      Amount: "8.00",
      BulkRef: "",
      CaptureType: "Partial",
    });
    expect(reserve.status).toBe(200);
    emu.userSimulation.checkin(unit, "+4520031802");
    expect(emu.userSimulation.accept(unit, "+4520031802").status).toBe(200);
    emu.clock.advance(10_000);
    const captured = await kit.legacy("ReservationCapture", {
      ...pos,
      OrderId: "R-1",
      Amount: "6.00",
      BulkRef: "",
    });
    expect(captured.body).toEqual({});

    // Subscriptions: two one-off payments accepted by the user and captured, a charge refunded in full.
    for (const [external, amount] of [
      ["one-off-1", "120.00"],
      ["one-off-2", "33.33"],
    ] as const) {
      const made = await subs.api("POST", `/agreements/${agreement}/oneoffpayments`, {
        amount,
        description: "Extra bag of beans",
        external_id: external,
        links: [{ rel: "user-redirect", href: "https://merchant.example/r" }],
      });
      expect(made.status).toBe(201);
      const id = String(o(made.body).id);
      expect((await subs.sim(`oneoffpayments/${id}/accept`)).status).toBe(200);
      expect((await subs.api("POST", `/agreements/${agreement}/oneoffpayments/${id}/capture`)).status).toBe(
        204,
      );
      emu.clock.advance(60_000);
    }
    const subsRefund = await subs.api("POST", `/agreements/${agreement}/payments/${charges[0]}/refunds`, {
      status_callback_url: `${rx.url}/refunds`,
      external_id: "refund-sub-0",
    });
    expect(o(subsRefund.body).amount).toBe("49.00");
    expect(
      emu
        .ledger()
        .filter((e) => e.interface === "subscriptions" && e.kind !== "paid")
        .map((e) => [e.kind, e.amount, e.orderId]),
    ).toEqual([
      ["reserved", 12_000, "one-off-1"],
      ["captured", 12_000, "one-off-1"],
      ["reserved", 3_333, "one-off-2"],
      ["captured", 3_333, "one-off-2"],
      ["refunded", 4_900, "refund-sub-0"],
    ]);

    // Invoices: two paid by the app user (the second reported by its payment reference).
    await paidInvoice("INV-1001", 125_000);
    await paidInvoice("INV-1002", 9_999, "PAYREF-77");

    // Online payments: a merchant of the same VAT, one payment authorized, captured twice, refunded once.
    const gateway = {
      "x-gateway-client-id": emu.info.online.clientId,
      "x-gateway-client-secret": emu.info.online.clientSecret,
    };
    const shop = await json("POST", "/api/v1/merchants", gateway, {
      externalId: "shop-1",
      name: "Emulator Merchant A/S",
      billingCurrency: "DKK",
      countryCode: "DK",
      vatNumber: merchant,
      merchantCategoryCode: 5814,
    });
    expect(shop.status).toBe(201);
    onlinePoint = String(shop.body.merchantId);
    const started = await json("POST", "/api/v1/payments", gateway, {
      allowedCardTypes: [{ name: "VISA-CREDIT", tokenCallbackUrl: `${rx.url}/token` }],
      amount: 8000,
      currencyCode: "DKK",
      merchantId: onlinePoint,
      merchantLogoUrl: "https://shop.example/logo.png",
      merchantName: "Emulator shop",
      merchantOrderId: "web-1",
      merchantUrl: "https://shop.example",
      pspReferenceId: "psp-1",
      publicKeyId: emu.info.online.publicKeyId,
      redirectFromServiceUrl: "https://shop.example/done",
      failedPaymentCallbackUrl: `${rx.url}/failed`,
    });
    expect(started.status).toBe(201);
    const online = String(started.body.paymentId);
    const user = await json(
      "POST",
      `/api/v1/payments/${online}/simulate-user-behavior`,
      { correlationid: "day-1" },
      { phoneNumber: DK_USER, lastFourDigits: null },
    );
    expect(user.body).toMatchObject({ status: "AwaitingAuthorization" });
    const attempt = String(user.body.authorizationAttemptId);
    expect(
      (
        await json("PATCH", `/api/v1/payments/${online}/authorizationattempts/${attempt}`, gateway, {
          succeeded: true,
        })
      ).status,
    ).toBe(204);
    const ts = () => new Date(emu.clock.now()).toISOString();
    for (const [amount, captureIdentifier] of [
      [6_000, "cap-1"],
      [2_000, "cap-2"],
    ] as const) {
      const c = await json("POST", `/api/v1/payments/${online}/captures`, gateway, {
        amount,
        captureIdentifier,
        timestamp: ts(),
        authorizationAttemptId: attempt,
      });
      expect(c.status).toBe(200);
    }
    const back = await json("POST", `/api/v1/payments/${online}/refunds`, gateway, {
      amount: 1_500,
      refundIdentifier: "ref-1",
      timestamp: ts(),
    });
    expect(back.status).toBe(200);
    expect(emu.clock.now()).toBeLessThan(DAY_END);
    // The next day, before the cut-off: a payment that belongs to the next transfer, not this one.
    emu.clock.advance(DAY_END + 3600_000 - emu.clock.now());
    await paidInvoice("INV-NEXT", 777);

    await kit.login();
    const list = await kit.get("/v1/paymentpoints");
    points = (list.body as { paymentPoints: { paymentPointId: string }[] }).paymentPoints.map(
      (p) => p.paymentPointId,
    );
  }, 60_000);
  afterAll(async () => {
    await subs?.close();
    await kit?.close();
    await v10?.close();
    await rx?.close();
  });

  const dayEntries = (): LedgerEntry[] =>
    v10.emu.ledger().filter((e) => MONEY.has(e.kind) && e.at >= DAY_START && e.at < DAY_END);

  it("the merchant's payment points are the store (both interfaces), the subscription provider, the issuer, the online merchant", () => {
    expect(new Set(points)).toEqual(
      new Set([v10.emu.info.v10.storeId, subsPoint, invoicePoint, onlinePoint]),
    );
  });

  it("pages of 1000 walk the day; every token carries /, + and = and is sent URL-encoded", async () => {
    const range = { from: "2026-11-24T00:00:00Z", to: "2026-11-25T00:00:00Z" };
    let tokens = 0;
    for (const id of points) {
      const pages = await kit.walk(`/v1/paymentpoints/${id}/transactions`, range);
      for (const [i, page] of pages.entries()) {
        const txs = page.transactions as Line[];
        if (i < pages.length - 1) {
          expect(txs).toHaveLength(1000);
          const token = page.nextPageToken as string;
          expect(token).toMatch(/\//);
          expect(token).toMatch(/\+/);
          expect(token).toMatch(/=/);
          tokens++;
        } else {
          expect(page.nextPageToken).toBeNull();
        }
      }
      lines.set(
        id,
        pages.flatMap((p) => p.transactions as Line[]),
      );
    }
    // 1502 subscription payments + their fees + one refund: 4 pages.
    expect(tokens).toBe(3);
    expect(lines.get(subsPoint)).toHaveLength(1502 * 2 + 1);
  });

  it("the day's report lists every payment, capture and refund of the day exactly once, with its fee", () => {
    const all = [...lines.values()].flat();
    const money = all.filter((l) => l.type === "Payment" || l.type === "Refund");
    const byId = new Map(dayEntries().map((e) => [String(7_000_000_000 + e.seq), e]));
    expect(money).toHaveLength(byId.size);
    expect(new Set(money.map((l) => l.paymentTransactionId))).toEqual(new Set(byId.keys()));
    for (const l of money) {
      const e = byId.get(l.paymentTransactionId) as LedgerEntry;
      expect(l.type).toBe(e.kind === "refunded" ? "Refund" : "Payment");
      expect(Math.round(l.amount * 100)).toBe(e.kind === "refunded" ? -e.amount : e.amount);
    }
    const fees = all.filter((l) => l.type === "TransactionFee");
    const payments = dayEntries().filter((e) => e.kind !== "refunded");
    expect(fees.map((l) => [l.paymentTransactionId, Math.round(l.amount * 100)]).sort()).toEqual(
      payments.map((e) => [String(7_000_000_000 + e.seq), -fee(e)]).sort(),
    );
    // Both point-of-sale interfaces land on the store's payment point; the cancelled reservation does not.
    const store = lines.get(v10.emu.info.v10.storeId) ?? [];
    expect(store.filter((l) => l.type === "Payment").map((l) => l.amount)).toEqual([20, 12.5, 15, 10, 6]);
    expect(store.filter((l) => l.type === "Refund").map((l) => l.amount)).toEqual([-5, -2.5]);
    expect(all.every((l) => l.transferReference === null)).toBe(true);
  });

  it("after the cut-off, each point's transfer is the day's sales net of refunds and fees", async () => {
    const cut = await kit.admin("POST", "/reporting/advance-to-cutoff", {});
    expect(cut.status).toBe(200);
    expect((cut.body as { iso: string }).iso).toBe("2026-11-25T02:00:00Z");
    // The login was an hour ago: the access token has expired; the gateway says so and the refresh token helps.
    const stale = await kit.get(`/v1/paymentpoints`);
    expect(stale.status).toBe(401);
    expect(stale.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    await kit.refresh();
    const entries = dayEntries();
    for (const id of points) {
      const ids = new Set(lines.get(id)?.map((l) => l.paymentTransactionId));
      const mine = entries.filter((e) => ids.has(String(7_000_000_000 + e.seq)));
      const expected = mine.reduce((n, e) => n + (e.kind === "refunded" ? -e.amount : e.amount - fee(e)), 0);
      const refs = await kit.get(`/v1/paymentpoints/${id}/transfer-references`, {
        from: "2026-11-24",
        to: "2026-11-26",
      });
      expect(refs.status).toBe(200);
      const list = (refs.body as { transferReferences: Record<string, unknown>[] }).transferReferences;
      expect(list).toEqual([
        {
          transferReference: expect.stringMatching(/^20261125\d{8}$/),
          transferReferenceDate: "2026-11-25",
          totalTransferredAmount: expected / 100,
          currencyCode: "DKK",
        },
      ]);
      const ref = list[0]?.transferReference as string;
      const pages = await kit.walk(`/v1/paymentpoints/${id}/transfers/${ref}`);
      const contents = pages.flatMap((p) => p.transactions as Line[]);
      expect(contents.map((l) => l.paymentTransactionId)).toEqual(
        lines.get(id)?.map((l) => l.paymentTransactionId),
      );
      expect(Math.round(contents.reduce((n, l) => n + l.amount * 100, 0))).toBe(expected);
      // The time-range list now names the transfer of each line.
      const after = await kit.walk(`/v1/paymentpoints/${id}/transactions`, {
        from: "2026-11-24T00:00:00Z",
        to: "2026-11-25T00:00:00Z",
      });
      expect(after.flatMap((p) => p.transactions as Line[]).every((l) => l.transferReference === ref)).toBe(
        true,
      );
    }
    // The next day's payment waits for the next transfer.
    const next = await kit.get(`/v1/paymentpoints/${invoicePoint}/transactions`, {
      from: "2026-11-25T00:00:00Z",
      to: "2026-11-26T00:00:00Z",
    });
    expect((next.body as { transactions: Line[] }).transactions).toMatchObject([
      { type: "Payment", amount: 7.77, externalTransactionId: "INV-NEXT", transferReference: null },
      { type: "TransactionFee", amount: -0.08, transferReference: null },
    ]);
  });

  it("transfer contents v2 pages as CSV with the next token in x-next-page-token", async () => {
    const refs = await kit.get(`/v1/paymentpoints/${subsPoint}/transfer-references`, {
      from: "2026-11-25",
      to: "2026-11-25",
    });
    const ref = (refs.body as { transferReferences: { transferReference: string }[] }).transferReferences[0]
      ?.transferReference as string;
    let token: string | undefined;
    let rows = 0;
    for (let i = 0; i < 10; i++) {
      const r = await kit.get(
        `/v2/paymentpoints/${subsPoint}/transfers/${ref}`,
        token ? { pageToken: token } : {},
        {
          accept: "text/csv",
        },
      );
      expect(r.status).toBe(200);
      expect(r.headers["content-type"]).toBe("text/csv; charset=utf-8");
      const csv = r.text.trimEnd().split("\r\n");
      expect(csv[0]?.startsWith("companyRegNo,merchantName,paymentPointId")).toBe(true);
      rows += csv.length - 1;
      const next = r.headers["x-next-page-token"];
      if (typeof next !== "string") break;
      expect(csv).toHaveLength(1001);
      expect(next).toMatch(/^(?=.*\/)(?=.*\+)(?=.*=)/);
      token = next;
    }
    expect(rows).toBe(1502 * 2 + 1);
  });
});
