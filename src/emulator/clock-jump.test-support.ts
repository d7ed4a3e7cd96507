import { expect } from "vitest";
import { ReportingKit } from "./reporting/testkit.test-support.js";
import { DK_USER, FAILING_USER, o, SubsKit } from "./subscriptions/testkit.test-support.js";
import type { HttpsReceiver } from "./testing/httpsReceiver.js";
import { V10Kit } from "./v10/testkit.test-support.js";

/**
 * A month of scheduled events for the clock-jump test (clock-jump.test.ts), set up through the interfaces'
 * HTTP APIs on 2026-12-01 and left to run: subscription charges due on several days (one in EUR, one whose
 * user's card fails through its retries), a reserved one-off that expires, an invoice paid on its scheduled
 * date, a V10 reservation that expires and a refund that is auto-captured, an online authorization whose
 * reservation expires, an older-interface reservation that is released. Every rule's time is a whole minute
 * (setup steps are placed so), so that a reference run stepping by whole minutes lands on each. Test support.
 */

export const MONTH_START = Date.parse("2026-12-01T09:00:00Z");
export const MONTH_END = Date.parse("2026-12-31T12:00:00Z");

const MINUTE = 60_000;

/** Advances the emulator to `before` ms ahead of the next whole minute (at least now). */
export function toMinute(emu: V10Kit["emu"], before = 0): void {
  const now = emu.clock.now();
  const target = Math.ceil((now + before) / MINUTE) * MINUTE - before;
  emu.clock.advance(target - now);
}

export interface Month {
  v10: V10Kit;
  subs: SubsKit;
  kit: ReportingKit;
  /** Payment point id → a name both emulators share (ids are random per emulator). */
  labels: Map<string, string>;
  close(): Promise<void>;
}

async function subscriptions(subs: SubsKit): Promise<void> {
  await subs.useReceiver();
  const dk = await subs.activeAgreement(DK_USER);
  const fi = await subs.activeAgreement("+358200318001", {
    currency: "EUR",
    country_code: "FI",
    external_id: "agr-fi",
  });
  const failing = await subs.activeAgreement(FAILING_USER, { external_id: "agr-fail" });
  const asked = await subs.requestPayments([
    subs.payment(dk, { amount: 49.5, due_date: "2026-12-11", external_id: "dec-11" }),
    subs.payment(dk, { amount: 12, due_date: "2026-12-20", external_id: "dec-20", grace_period_days: 2 }),
    subs.payment(fi, { amount: 20, due_date: "2026-12-15", external_id: "dec-15-eur" }),
    subs.payment(failing, { amount: 7, due_date: "2026-12-05", external_id: "dec-05", grace_period_days: 1 }),
  ]);
  expect(asked.status, JSON.stringify(asked.body)).toBe(202);
  const made = await subs.api("POST", `/agreements/${dk}/oneoffpayments`, {
    amount: "30.00",
    description: "Beans",
    external_id: "one-off-expires",
    links: [{ rel: "user-redirect", href: "https://merchant.example/r" }],
  });
  expect(made.status).toBe(201);
  toMinute(subs.emu);
  expect((await subs.sim(`oneoffpayments/${String(o(made.body).id)}/accept`)).status).toBe(200);
}

async function invoice(v10: V10Kit): Promise<string> {
  const { merchantId, accessToken, issuers } = v10.emu.info.invoices;
  const issuer = issuers.find((i) => i.status === "enabled")?.id ?? "";
  const call = (path: string, body: unknown): Promise<Response> =>
    fetch(`${v10.emu.info.invoices.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const article = { ArticleNumber: "A-1", ArticleDescription: "Beans", VATRate: 25, TotalVATAmount: 25 };
  const created = await call(`/api/v1/merchants/${merchantId}/invoices`, {
    InvoiceIssuer: issuer,
    ConsumerAlias: { Alias: DK_USER, AliasType: "Phone" },
    TotalAmount: 125,
    TotalVatAmount: 25,
    CountryCode: "DK",
    CurrencyCode: "DKK",
    InvoiceNumber: "INV-DEC",
    IssueDate: "2026-12-01",
    OrderDate: "2026-12-01",
    DeliveryDate: "2026-12-01",
    DueDate: "2026-12-24",
    InvoiceArticles: [
      { ...article, TotalPriceIncludingVat: 125, Unit: "kg", Quantity: 1, PricePerUnit: 125 },
    ].map((a) => ({ ...a, PriceReduction: 0, PriceDiscount: 0, Bonus: 0 })),
  });
  expect(created.status).toBe(202);
  const id = String(o(await created.json()).InvoiceId);
  const accepted = await call(`/app/usersimulation/invoices/${id}/accept`, {
    phoneNumber: DK_USER,
    paymentDate: "2026-12-18",
  });
  expect(accepted.status).toBe(200);
  return issuer;
}

async function pointOfSale(v10: V10Kit, kit: ReportingKit): Promise<void> {
  const emu = v10.emu;
  const { posId, beaconId } = await v10.createPos();
  /** Reserved at a whole minute: accepted one accept-to-reserved delay (10 ms here) before it. */
  const reserve = async (amount: number, orderId: string): Promise<string> => {
    emu.userSimulation.checkin(beaconId, DK_USER);
    const r = await v10.initiate(posId, amount, { orderId });
    const id = String(o(r.body).paymentId);
    toMinute(emu, 10);
    emu.userSimulation.accept(beaconId, DK_USER);
    emu.clock.advance(10);
    expect((await v10.payment(id)).status).toBe("Reserved");
    return id;
  };
  // A reservation never captured: ExpiredAndCancelled 7 days later.
  await reserve(20, "v10-expires");
  const paid = await reserve(30, "v10-paid");
  expect((await v10.call("POST", `/v10/payments/${paid}/capture`, { body: { amount: 30 } })).status).toBe(
    200,
  );
  // A refund left Reserved (at a whole minute, 100 ms after its creation): ExpiredAndCaptured 24 h later.
  toMinute(emu, 100);
  const refund = await v10.call("POST", "/v10/refunds", {
    body: { paymentId: paid, refundOrderId: "v10-refund", amount: 5, currencyCode: "DKK" },
  });
  expect(refund.status).toBe(200);
  emu.clock.advance(100);

  const unit = "100000000000001";
  const pos = { PoSId: "vm-legacy-1" };
  expect((await kit.legacy("RegisterPoS", { ...pos, Name: "Legacy vending" })).status).toBe(200);
  expect((await kit.legacy("AssignPoSUnitIdToPos", { ...pos, PoSUnitId: unit })).status).toBe(200);
  const started = await kit.legacy("ReservationStart", {
    ...pos,
    OrderId: "R-released",
    Amount: "8.00",
    BulkRef: "",
    CaptureType: "Partial",
  });
  expect(started.status).toBe(200);
  emu.userSimulation.checkin(unit, "+4520031802");
  toMinute(emu);
  expect(emu.userSimulation.accept(unit, "+4520031802").status).toBe(200);
  emu.clock.advance(0); // done (100) at this whole minute: released 7 days later
}

async function online(v10: V10Kit, rx: HttpsReceiver): Promise<string> {
  const emu = v10.emu;
  const gateway = {
    "x-gateway-client-id": emu.info.online.clientId,
    "x-gateway-client-secret": emu.info.online.clientSecret,
    "content-type": "application/json",
  };
  const call = async (method: string, path: string, body: unknown, headers = gateway) => {
    const r = await fetch(`${emu.info.online.baseUrl}${path}`, {
      method,
      headers,
      body: JSON.stringify(body),
    });
    return { status: r.status, body: o(r.status === 204 ? {} : await r.json()) };
  };
  const shop = await call("POST", "/api/v1/merchants", {
    externalId: "shop-1",
    name: "Shop",
    billingCurrency: "DKK",
    countryCode: "DK",
    vatNumber: "DK12345678",
    merchantCategoryCode: 5814,
  });
  const merchantId = String(shop.body.merchantId);
  const started = await call("POST", "/api/v1/payments", {
    allowedCardTypes: [{ name: "VISA-CREDIT", tokenCallbackUrl: `${rx.url}/token` }],
    amount: 8000,
    currencyCode: "978",
    merchantId,
    merchantLogoUrl: "https://shop.example/logo.png",
    merchantName: "Shop",
    merchantOrderId: "web-expires",
    merchantUrl: "https://shop.example",
    pspReferenceId: "psp-1",
    publicKeyId: emu.info.online.publicKeyId,
    redirectFromServiceUrl: "https://shop.example/done",
  });
  expect(started.status).toBe(201);
  const id = String(started.body.paymentId);
  const user = await call(
    "POST",
    `/api/v1/payments/${id}/simulate-user-behavior`,
    { phoneNumber: DK_USER, lastFourDigits: null },
    { "content-type": "application/json" } as typeof gateway,
  );
  const attempt = String(user.body.authorizationAttemptId);
  expect(
    (await call("PATCH", `/api/v1/payments/${id}/authorizationattempts/${attempt}`, { succeeded: true }))
      .status,
  ).toBe(204);
  const patched = await call("PATCH", `/api/v1/payments/${id}`, {
    reservationExpireTimestamp: "2026-12-09T10:30:00Z",
  });
  expect(patched.status).toBe(204);
  return merchantId;
}

/**
 * Sets the month up on a fresh emulator (frozen real time) at MONTH_START; `scheduledStops: false` makes the
 * reference emulator whose advances run the rules only at their end.
 */
export async function startMonth(rx: HttpsReceiver, scheduledStops = true): Promise<Month> {
  const v10 = await V10Kit.start({
    scheduledStops,
    timeSource: () => 0,
    startTime: MONTH_START,
    callbackCa: rx.ca,
    callbackAllowLoopbackPorts: true,
    subscriptions: { callbackCa: rx.ca, callbackAllowLoopbackPorts: true },
  });
  const subs = await SubsKit.on(v10.emu, rx);
  const kit = ReportingKit.on(v10.emu);
  await subscriptions(subs);
  const issuer = await invoice(v10);
  await pointOfSale(v10, kit);
  const shop = await online(v10, rx);
  const labels = new Map([
    [subs.pid, "subscriptions"],
    [issuer, "invoices"],
    [shop, "online"],
    [v10.emu.info.reporting.paymentPointId, "store"],
  ]);
  return {
    v10,
    subs,
    kit,
    labels,
    async close() {
      await subs.close();
      await kit.close();
      await v10.close();
    },
  };
}

/** What the month left: the ledger, every payment point's report lines and the transfers, ids made neutral. */
export async function snapshot(m: Month): Promise<Record<string, unknown>> {
  const label = (id: string | undefined): string => (id === undefined ? "" : (m.labels.get(id) ?? id));
  const ledger = m.v10.emu.ledger().map((e) => ({
    seq: e.seq,
    interface: e.interface,
    kind: e.kind,
    amount: e.amount,
    currency: e.currency,
    orderId: e.orderId,
    merchant: e.merchant,
    point: label(e.point),
    at: new Date(e.at).toISOString(),
  }));
  await m.kit.login();
  const reports: Record<string, unknown[]> = {};
  const list = await m.kit.get("/v1/paymentpoints");
  const points = (list.body as { paymentPoints: { paymentPointId: string }[] }).paymentPoints;
  for (const { paymentPointId: id } of points) {
    const name = label(id);
    const pages = await m.kit.walk(`/v1/paymentpoints/${id}/transactions`, {
      from: "2026-12-01T00:00:00Z",
      to: "2027-01-01T00:00:00Z",
    });
    reports[name] = pages.flatMap((p) => p.transactions as unknown[]);
  }
  const transfers = m.v10.emu.reporting
    .transfers()
    .map((t) => ({ ...t, paymentPointId: label(t.paymentPointId) }));
  return { ledger, reports, transfers };
}
