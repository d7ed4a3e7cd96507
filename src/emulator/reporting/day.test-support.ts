import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { DK_USER, o, SubsKit } from "../subscriptions/testkit.test-support.js";
import { type HttpsReceiver, startHttpsReceiver } from "../testing/httpsReceiver.js";
import type { LedgerEntry } from "../types.js";
import { V10Kit } from "../v10/testkit.test-support.js";
import { ReportingKit as Kit, type ReportingKit } from "./testkit.test-support.js";

/**
 * The one-day ledger test's day (day.test.ts): the fee schedule restated, and the setup that runs a day of
 * point-of-sale vends, subscription charges, invoices and online payments through their HTTP APIs.
 */

export const DAY_START = Date.parse("2026-11-24T00:00:00Z");
export const DAY_END = Date.parse("2026-11-25T00:00:00Z");
/** Independent restatement of the documented fee schedule (basis points per interface, half up). */
const BP: Record<string, number> = { v10: 75, legacy: 75, subscriptions: 100, invoices: 100, online: 125 };
export const fee = (e: LedgerEntry): number =>
  Math.floor((e.amount * (BP[e.interface] ?? 0) + 5000) / 10_000);
export const MONEY = new Set(["paid", "captured", "refunded"]);
/** Subscription charges requested the day before, in one payment-request array, executed on the day. */
const CHARGES = 1500;

export interface Line {
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

/** What the day's setup has started so far: closed by stopDay even when the setup fails midway. */
export interface DayRig {
  v10?: V10Kit;
  kit?: ReportingKit;
  rx?: HttpsReceiver;
  subs?: SubsKit;
}

/** The day, run: the kits, and the merchant's payment points. */
export interface Day {
  v10: V10Kit;
  kit: ReportingKit;
  rx: HttpsReceiver;
  subs: SubsKit;
  subsPoint: string;
  invoicePoint: string;
  onlinePoint: string;
  points: string[];
}

/** Runs the day (and the first hour of the next) on a fresh emulator; records what it starts in `rig`. */
export async function startDay(rig: DayRig): Promise<Day> {
  const merchant = "DK12345678";
  let invoicePoint = "";

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

  const rx = await startHttpsReceiver();
  rig.rx = rx;
  // The day before, at noon: the subscription charges are requested for the day (at least a day ahead).
  const v10 = await V10Kit.start({
    timeSource: () => 0,
    startTime: Date.parse("2026-11-23T12:00:00Z"),
    bodyLimitBytes: 1024 * 1024,
    callbackCa: rx.ca,
    callbackAllowLoopbackPorts: true,
    subscriptions: { callbackCa: rx.ca, callbackAllowLoopbackPorts: true },
  });
  rig.v10 = v10;
  const kit = Kit.on(v10.emu);
  rig.kit = kit;
  const emu = v10.emu;
  const subs = await SubsKit.on(emu, rx);
  rig.subs = subs;
  const subsPoint = subs.pid;
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
  const onlinePoint = String(shop.body.merchantId);
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
  const points = (list.body as { paymentPoints: { paymentPointId: string }[] }).paymentPoints.map(
    (p) => p.paymentPointId,
  );
  return { v10, kit, rx, subs, subsPoint, invoicePoint, onlinePoint, points };
}

/** Closes what the day's setup started. */
export async function stopDay(rig: DayRig): Promise<void> {
  await rig.subs?.close();
  await rig.kit?.close();
  await rig.v10?.close();
  await rig.rx?.close();
}
