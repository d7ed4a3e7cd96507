/**
 * The emulator's online payments (seed 002 §Online payments) from initiation to authorization and after:
 * card data callbacks over HTTPS, captures and refunds, user refusals, expiry, and the error answers.
 */
import { constants, privateDecrypt } from "node:crypto";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../index.js";
import { type HttpsReceiver, hasOpenssl } from "../testing/httpsReceiver.js";
import { CREDIT, DEBIT, onlineHarness, YOUNG } from "./online.test-support.js";

describe.skipIf(!hasOpenssl())("online payments: authorization flows over HTTP, callbacks over HTTPS", () => {
  let emu: Emulator;
  let rx: HttpsReceiver;
  let merchantId: string;
  const { open, close, call, start, simulate, get, ts, authorized } = onlineHarness();

  beforeAll(async () => {
    ({ emu, rx, merchantId } = await open());
  });
  afterAll(close);

  it("Initiated → AwaitingAuthorization (token callback) → Authorized → captures, cancel, refunds, idempotent", async () => {
    const { id, attempt } = await authorized();
    const cb = await rx.waitFor(
      (r) => r.path === "/token" && (r.json as { paymentId?: string }).paymentId === id,
    );
    expect(cb.json).toMatchObject({
      authorizationAttemptId: attempt,
      cardType: "VISA-CREDIT",
      maskedCardNumber: "411111XXXXXX1111",
      amount: 1000,
      token: { value: expect.stringMatching(/^tok_test_/) },
    });
    expect(cb.body).not.toContain("4111111111111111");
    expect(await get(id)).toMatchObject({ status: "Authorized", authorizedAmount: 1000 });
    const capture = (amount: number, captureIdentifier: string) =>
      call("POST", `/api/v1/payments/${id}/captures`, {
        amount,
        captureIdentifier,
        timestamp: "2026-03-02T10:00:00Z",
        authorizationAttemptId: attempt,
      });
    const c1 = await capture(300, "cap-1");
    expect(c1.status).toBe(200);
    expect(await capture(300, "cap-1")).toEqual(c1);
    expect(await capture(301, "cap-1")).toMatchObject({
      status: 409,
      body: { code: "IdempotencyConflict" },
    });
    expect((await capture(200, "cap-2")).body.captureId).not.toBe(c1.body.captureId);
    expect(await capture(600, "cap-3")).toMatchObject({ status: 409, body: { code: "AmountTooHigh" } });
    const badAttempt = await call("POST", `/api/v1/payments/${id}/captures`, {
      amount: 1,
      captureIdentifier: "cap-x",
      timestamp: ts(),
      authorizationAttemptId: "00000000-0000-4000-8000-000000000000",
    });
    expect(badAttempt.body).toMatchObject({ field: "authorizationAttemptId" });
    const cancel = await call("POST", `/api/v1/payments/${id}/cancels`, {
      amount: 500,
      cancelIdentifier: "can-1",
      timestamp: ts(),
    });
    expect(cancel.body.cancelId).toEqual(expect.any(String));
    expect(await get(id)).toMatchObject({ status: "Captured", capturedAmount: 500, cancelledAmount: 500 });
    expect(await capture(1, "cap-4")).toMatchObject({ status: 409, body: { code: "InvalidState" } });
    const refund = (amount: number, refundIdentifier: string) =>
      call("POST", `/api/v1/payments/${id}/refunds`, { amount, refundIdentifier, timestamp: ts() });
    const r1 = await refund(100, "ref-1");
    expect(r1.body.refundId).toEqual(expect.any(String));
    expect(await refund(100, "ref-1")).toEqual(r1);
    expect((await refund(400, "ref-2")).status).toBe(200);
    expect(await refund(1, "ref-3")).toMatchObject({ status: 409, body: { code: "AmountTooHigh" } });
    const ledger = emu
      .ledger()
      .filter((e) => e.interface === "online" && (e.id === id || e.paymentId === id));
    expect(ledger.map((e) => [e.kind, e.amount])).toEqual([
      ["reserved", 1000],
      ["captured", 300],
      ["captured", 200],
      ["cancelled", 500],
      ["refunded", 100],
      ["refunded", 400],
    ]);
    expect(ledger.every((e) => e.merchant === "DK87654321" && e.point === merchantId)).toBe(true);
    expect(new Set(ledger.map((e) => e.id)).size).toBe(6);
  });

  it("encrypted card data with the test key and lastFourDigits; a failed authorization → Failed + failedPaymentCallback", async () => {
    const id = await start();
    const s = await simulate(id, CREDIT, "4444");
    expect(s.body).toMatchObject({ cardType: "MC-CREDIT" });
    const cb = await rx.waitFor(
      (r) => r.path === "/pan" && (r.json as { paymentId?: string }).paymentId === id,
    );
    const data = cb.json as { encryptedCardData: string; publicKeyId: number; maskedCardNumber: string };
    expect(data.maskedCardNumber).toBe("555555XXXXXX4444");
    const key = (await call("GET", "/_admin/online/testkey")).body as {
      privateKeyPem: string;
      publicKeyId: number;
    };
    expect(data.publicKeyId).toBe(key.publicKeyId);
    const clear = privateDecrypt(
      { key: key.privateKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" },
      Buffer.from(data.encryptedCardData, "base64"),
    );
    expect(JSON.parse(clear.toString())).toMatchObject({ pan: "5555555555554444" });
    const wrongAttempt = await call(
      "PATCH",
      `/api/v1/payments/${id}/authorizationattempts/00000000-0000-4000-8000-000000000000`,
      { succeeded: true },
    );
    expect(wrongAttempt.status).toBe(404);
    await call("PATCH", `/api/v1/payments/${id}/authorizationattempts/${s.body.authorizationAttemptId}`, {
      succeeded: false,
    });
    expect(await get(id)).toMatchObject({ status: "Failed", failureReason: "AuthorizationFailed" });
    const failed = await rx.waitFor(
      (r) => r.path === "/failed" && (r.json as { paymentId?: string }).paymentId === id,
    );
    expect(failed.json).toMatchObject({
      reason: "AuthorizationFailed",
      pspReferenceId: expect.any(String),
    });
  });

  it("co-branded card: the domestic type, or the international one when preferred", async () => {
    const a = await start();
    expect((await simulate(a, DEBIT)).body).toMatchObject({ cardType: "DANKORT" });
    const b = await start({ preferInternationalSchemePartOfCobrandedCard: true });
    expect((await simulate(b, DEBIT)).body).toMatchObject({ cardType: "VISA-DEBIT" });
  });

  it("user refusals: minimumServiceUserAge, no eligible card, unknown user, card data not delivered", async () => {
    const young = await start({ minimumServiceUserAge: 18 });
    expect((await simulate(young, YOUNG)).body).toMatchObject({ status: "Failed", reason: "UserTooYoung" });
    await rx.waitFor((r) => r.path === "/failed" && (r.json as { paymentId?: string }).paymentId === young);
    const adult = await start({ minimumServiceUserAge: 18 });
    expect((await simulate(adult, CREDIT)).body).toMatchObject({ status: "AwaitingAuthorization" });
    const dankortOnly = await start({
      allowedCardTypes: [{ name: "DANKORT", tokenCallbackUrl: `${rx.url}/token` }],
    });
    expect((await simulate(dankortOnly, CREDIT)).body).toMatchObject({
      status: "Failed",
      reason: "NoEligibleCard",
    });
    expect((await simulate(dankortOnly, CREDIT)).body).toMatchObject({ code: "InvalidState" });
    const nobody = await start();
    expect((await simulate(nobody, "+4599999999")).status).toBe(404);
    rx.respondWith((r) => (r.path === "/token-down" ? 500 : 200));
    const down = await start({
      allowedCardTypes: [{ name: "VISA-CREDIT", tokenCallbackUrl: `${rx.url}/token-down` }],
    });
    expect((await simulate(down, CREDIT)).body).toMatchObject({
      status: "Failed",
      reason: "CardDataNotDelivered",
    });
    rx.respondWith(200);
  });

  it("validUntil expires an Initiated payment (checkout: 15 minutes later, address callback, delivery countries)", async () => {
    const until = new Date(emu.clock.now() + 60_000).toISOString();
    const plain = await start({ validUntil: until });
    const checkout = await start({
      validUntil: until,
      isCheckout: true,
      addressCallbackUrl: `${rx.url}/address`,
    });
    const limited = await start({
      isCheckout: true,
      addressCallbackUrl: `${rx.url}/address`,
      deliveryLimitedTo: ["SE"],
    });
    emu.clock.advance(61_000);
    expect(await get(plain)).toMatchObject({ status: "Expired" });
    expect((await simulate(plain, CREDIT)).status).toBe(409);
    await rx.waitFor(
      (r) => r.path === "/failed" && (r.json as { paymentId?: string; reason?: string }).paymentId === plain,
    );
    expect((await simulate(checkout, CREDIT)).body).toMatchObject({ status: "AwaitingAuthorization" });
    const address = await rx.waitFor(
      (r) => r.path === "/address" && (r.json as { paymentId?: string }).paymentId === checkout,
    );
    expect(address.json).toMatchObject({ address: { countryCode: "DK" } });
    expect((await simulate(limited, CREDIT)).body).toMatchObject({
      status: "Failed",
      reason: "DeliveryCountryNotAllowed",
    });
    const late = await start({
      validUntil: new Date(emu.clock.now() + 60_000).toISOString(),
      isCheckout: true,
      addressCallbackUrl: `${rx.url}/address`,
    });
    emu.clock.advance(16 * 60_000 + 1000);
    expect(await get(late)).toMatchObject({ status: "Expired" });
  });

  it("answers 404 for an unknown operation or payment and 415 for a non-JSON body", async () => {
    expect((await call("GET", "/api/v1/payments/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await call("POST", "/api/v1/nothing", {})).status).toBe(404);
    const r = await request(`${emu.info.online.baseUrl}/api/v1/merchants`, {
      method: "POST",
      headers: {
        "x-gateway-client-id": emu.info.online.clientId,
        "x-gateway-client-secret": emu.info.online.clientSecret,
        "content-type": "text/plain",
      },
      body: "{}",
    });
    expect(r.statusCode).toBe(415);
    await r.body.dump();
    const cbs = (await call("GET", "/_admin/online/callbacks")).body.callbacks as { kind: string }[];
    expect(new Set(cbs.map((c) => c.kind))).toEqual(new Set(["cardData", "failedPayment", "address"]));
  });
});
