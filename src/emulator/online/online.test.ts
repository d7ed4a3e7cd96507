import { constants, privateDecrypt } from "node:crypto";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../index.js";
import { type HttpsReceiver, hasOpenssl, startHttpsReceiver } from "../testing/httpsReceiver.js";

const START = Date.parse("2026-03-02T10:00:00Z");
const CREDIT = "+4520031801";
const DEBIT = "+4520031802";
const YOUNG = "+4520039915";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describe.skipIf(!hasOpenssl())(
  "online payments (seed 002 §Online payments) over HTTP, callbacks over HTTPS",
  () => {
    let emu: Emulator;
    let rx: HttpsReceiver;
    let merchantId: string;
    let n = 0;

    beforeAll(async () => {
      rx = await startHttpsReceiver();
      emu = await startEmulator({
        startTime: START,
        timeSource: () => 0,
        callbackCa: rx.ca,
        callbackAllowLoopbackPorts: true,
        seed: { users: [{ phone: YOUNG, features: ["creditCard"], age: 15 }] },
      });
      const m = await call("POST", "/api/v1/merchants", merchant());
      expect(m.status).toBe(201);
      merchantId = String(m.body.merchantId);
    });
    afterAll(async () => {
      await emu.close();
      await rx.close();
    });

    async function call(
      method: string,
      path: string,
      body?: unknown,
      headers?: Record<string, string>,
    ): Promise<Answer> {
      const r = await request(`${emu.info.online.baseUrl}${path}`, {
        method: method as "GET",
        headers: headers ?? {
          "x-gateway-client-id": emu.info.online.clientId,
          "x-gateway-client-secret": emu.info.online.clientSecret,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await r.body.text();
      return { status: r.statusCode, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
    }

    function merchant(over: Record<string, unknown> = {}) {
      n += 1;
      return {
        externalId: `ext-${n}`,
        name: "Coffee Shop ApS",
        billingCurrency: "DKK",
        countryCode: "DK",
        vatNumber: "DK87654321",
        merchantCategoryCode: 5814,
        ...over,
      };
    }

    function initiate(over: Record<string, unknown> = {}) {
      n += 1;
      return {
        allowedCardTypes: [
          { name: "VISA-CREDIT", tokenCallbackUrl: `${rx.url}/token`, encryptedPanCallbackUrl: null },
          { name: "MC-CREDIT", encryptedPanCallbackUrl: `${rx.url}/pan` },
          { name: "DANKORT", tokenCallbackUrl: `${rx.url}/token` },
          { name: "VISA-DEBIT", tokenCallbackUrl: `${rx.url}/token` },
        ],
        amount: 1000,
        currencyCode: "DKK",
        merchantId,
        merchantLogoUrl: "https://shop.example/logo.png",
        merchantName: "Coffee Shop",
        merchantOrderId: `order-${n}`,
        merchantUrl: "https://shop.example",
        pspReferenceId: `psp-${n}`,
        publicKeyId: emu.info.online.publicKeyId,
        redirectFromServiceUrl: "https://shop.example/done",
        failedPaymentCallbackUrl: `${rx.url}/failed`,
        ...over,
      };
    }

    async function start(over: Record<string, unknown> = {}): Promise<string> {
      const r = await call("POST", "/api/v1/payments", initiate(over));
      expect(r.status).toBe(201);
      return String(r.body.paymentId);
    }
    const simulate = (id: string, phoneNumber: string, lastFourDigits: string | null = null) =>
      call(
        "POST",
        `/api/v1/payments/${id}/simulate-user-behavior`,
        { phoneNumber, lastFourDigits },
        { "content-type": "application/json", correlationid: "sim-1" },
      );
    const get = async (id: string) => (await call("GET", `/api/v1/payments/${id}`)).body;
    const ts = () => new Date(emu.clock.now()).toISOString();
    async function authorized(over: Record<string, unknown> = {}): Promise<{ id: string; attempt: string }> {
      const id = await start(over);
      const s = await simulate(id, CREDIT);
      expect(s.body).toMatchObject({ status: "AwaitingAuthorization", cardType: "VISA-CREDIT" });
      const attempt = String(s.body.authorizationAttemptId);
      expect(
        (await call("PATCH", `/api/v1/payments/${id}/authorizationattempts/${attempt}`, { succeeded: true }))
          .status,
      ).toBe(204);
      return { id, attempt };
    }

    it("authenticates by x-gateway-client-id/secret (401 otherwise) and reports the credentials", async () => {
      const ok = await call("GET", "/api/v1/credentials");
      expect(ok).toEqual({
        status: 200,
        body: { integratorName: "Emulator PSP", clientName: "emulator-psp-client", active: true },
      });
      const wrong = await call("GET", "/api/v1/credentials", undefined, {
        "x-gateway-client-id": emu.info.online.clientId,
        "x-gateway-client-secret": "x",
      });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toMatchObject({ code: "Unauthorized" });
      expect((await call("GET", "/api/v1/merchants", undefined, {})).status).toBe(401);
      // An inactive client is known (not 401) but refused: 403.
      const toggle = (active: unknown) =>
        call("PUT", `/_admin/online/clients/${emu.info.online.clientId}/active`, { active });
      expect((await toggle("no")).status).toBe(400);
      expect((await toggle(false)).status).toBe(200);
      const off = await call("GET", "/api/v1/merchants");
      expect(off.status).toBe(403);
      expect(off.body).toMatchObject({ code: "Forbidden" });
      expect((await toggle(true)).status).toBe(200);
      expect((await call("GET", "/api/v1/merchants")).status).toBe(200);
    });

    it("merchants: create with every field rule, duplicate externalId, get, list, delete", async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: "" }, "name"],
        [{ name: "x".repeat(256) }, "name"],
        [{ merchantCategoryCode: 0 }, "merchantCategoryCode"],
        [{ merchantCategoryCode: 10000 }, "merchantCategoryCode"],
        [{ billingCurrency: "XXX" }, "billingCurrency"],
        [{ countryCode: "dk" }, "countryCode"],
        [{ externalId: undefined }, "externalId"],
        [{ vatNumber: 5 }, "vatNumber"],
        [{ merchantId: "x" }, "merchantId"],
      ];
      for (const [over, field] of cases) {
        const r = await call("POST", "/api/v1/merchants", merchant(over));
        expect({ field, status: r.status, body: r.body }).toMatchObject({
          status: 400,
          body: { code: "ValidationError", field },
        });
      }
      expect(await call("POST", "/api/v1/merchants", { ...merchant(), name: "x".repeat(255) })).toMatchObject(
        { status: 201 },
      );
      const dup = await call("POST", "/api/v1/merchants", merchant({ externalId: "ext-1" }));
      expect(dup).toMatchObject({ status: 409, body: { code: "DuplicateExternalId" } });
      const got = await call("GET", `/api/v1/merchants/${merchantId}`);
      expect(got.body).toEqual({
        merchantId,
        externalId: "ext-1",
        name: "Coffee Shop ApS",
        billingCurrency: "DKK",
        countryCode: "DK",
        vatNumber: "DK87654321",
        merchantCategoryCode: 5814,
      });
      const made = await call("POST", "/api/v1/merchants", merchant());
      const gone = String(made.body.merchantId);
      const list = (await call("GET", "/api/v1/merchants")).body.merchants as { merchantId: string }[];
      expect(list.map((m) => m.merchantId)).toContain(gone);
      expect((await call("DELETE", `/api/v1/merchants/${gone}`)).status).toBe(204);
      expect((await call("GET", `/api/v1/merchants/${gone}`)).status).toBe(404);
      expect((await call("DELETE", `/api/v1/merchants/${gone}`)).status).toBe(404);
      const pay = await call("POST", "/api/v1/payments", initiate({ merchantId: gone }));
      expect(pay.body).toMatchObject({ code: "ValidationError", field: "merchantId" });
    });

    it("initiate: every field rule answers 400 naming the field; a valid one answers the redirect URLs", async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ allowedCardTypes: [] }, "allowedCardTypes"],
        [
          { allowedCardTypes: [{ name: "AMEX", tokenCallbackUrl: `${rx.url}/t` }] },
          "allowedCardTypes[0].name",
        ],
        [{ allowedCardTypes: [{ name: "VISA-CREDIT" }] }, "allowedCardTypes[0]"],
        [{ allowedCardTypes: [{ name: "VISA-CREDIT", tokenCallbackUrl: "http://x/t" }] }, "tokenCallbackUrl"],
        [{ amount: 0 }, "amount"],
        [{ amount: 10.5 }, "amount"],
        [{ currencyCode: "JPY" }, "currencyCode"],
        [{ merchantId: "nope" }, "merchantId"],
        [{ merchantId: "00000000-0000-4000-8000-000000000000" }, "merchantId"],
        [{ merchantLogoUrl: "http://shop.example/logo.png" }, "merchantLogoUrl"],
        [{ merchantLogoUrl: "https://shop.example/logo.gif" }, "merchantLogoUrl"],
        [{ merchantName: "" }, "merchantName"],
        [{ merchantOrderId: undefined }, "merchantOrderId"],
        [{ merchantUrl: "x".repeat(151) }, "merchantUrl"],
        [{ pspReferenceId: "" }, "pspReferenceId"],
        [{ pspReferenceId: "x".repeat(51) }, "pspReferenceId"],
        [{ publicKeyId: 99 }, "publicKeyId"],
        [{ publicKeyId: 2 ** 31 }, "publicKeyId"],
        [{ redirectFromServiceUrl: "/done" }, "redirectFromServiceUrl"],
        [{ failedPaymentCallbackUrl: "http://x/f" }, "failedPaymentCallbackUrl"],
        [{ isCheckout: "yes" }, "isCheckout"],
        [{ isCheckout: true }, "addressCallbackUrl"],
        [{ deliveryLimitedTo: ["dk"] }, "deliveryLimitedTo"],
        [{ deliveryAddressDisallowedReasonCode: 1.5 }, "deliveryAddressDisallowedReasonCode"],
        [{ deliveryAddressAllowed: 1 }, "deliveryAddressAllowed"],
        [{ validUntil: "2026-03-02T09:00:00Z" }, "validUntil"],
        [{ validUntil: "tomorrow" }, "validUntil"],
        [{ autoCapture: "true" }, "autoCapture"],
        [{ preferInternationalSchemePartOfCobrandedCard: 0 }, "preferInternationalSchemePartOfCobrandedCard"],
        [{ customerLanguageCode: "danish" }, "customerLanguageCode"],
        [{ minimumServiceUserAge: 151 }, "minimumServiceUserAge"],
        [{ minimumServiceUserAge: -1 }, "minimumServiceUserAge"],
        [{ extra: 1 }, "extra"],
      ];
      for (const [over, field] of cases) {
        const r = await call("POST", "/api/v1/payments", initiate(over));
        expect({ field, status: r.status, body: r.body }).toMatchObject({
          status: 400,
          body: { code: "ValidationError", field: expect.stringContaining(field) },
        });
      }
      const ok = await call(
        "POST",
        "/api/v1/payments",
        initiate({
          currencyCode: "208",
          minimumServiceUserAge: 0,
          customerLanguageCode: "da",
          deliveryLimitedTo: null,
          validUntil: null,
        }),
      );
      expect(ok.status).toBe(201);
      expect(ok.body).toEqual({
        paymentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        redirectToServiceUrl: `${emu.info.online.baseUrl}/online/landing/${ok.body.paymentId}`,
        redirectToServiceAppUrl: `service://online?paymentId=${ok.body.paymentId}`,
      });
      expect(emu.ledger().filter((e) => e.interface === "online")).toEqual([]);
    });

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
        (r) =>
          r.path === "/failed" && (r.json as { paymentId?: string; reason?: string }).paymentId === plain,
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

    it("cancel before the user acts; reservation expiry after reservationExpireTimestamp; update rules", async () => {
      const early = await start();
      expect(
        (
          await call("PATCH", `/api/v1/payments/${early}`, {
            reservationExpireTimestamp: new Date(emu.clock.now() + 3600_000).toISOString(),
          })
        ).status,
      ).toBe(409);
      expect(
        (await call("PATCH", `/api/v1/payments/${early}`, { redirectFromServiceUrl: "http://x" })).body,
      ).toMatchObject({ field: "redirectFromServiceUrl" });
      expect(
        (
          await call("PATCH", `/api/v1/payments/${early}`, {
            redirectFromServiceUrl: "https://shop.example/new",
          })
        ).status,
      ).toBe(204);
      expect(await get(early)).toMatchObject({ redirectFromServiceUrl: "https://shop.example/new" });
      expect(
        (
          await call("POST", `/api/v1/payments/${early}/cancels`, {
            amount: 1000,
            cancelIdentifier: "c",
            timestamp: ts(),
          })
        ).status,
      ).toBe(200);
      expect(await get(early)).toMatchObject({ status: "Cancelled" });
      expect((await simulate(early, CREDIT)).status).toBe(409);
      expect(
        (
          await call("POST", `/api/v1/payments/${early}/refunds`, {
            amount: 1,
            refundIdentifier: "r",
            timestamp: ts(),
          })
        ).status,
      ).toBe(409);
      const part = await authorized();
      const none = await authorized();
      const expire = new Date(emu.clock.now() + 3600_000).toISOString();
      for (const p of [part.id, none.id])
        expect(
          (await call("PATCH", `/api/v1/payments/${p}`, { reservationExpireTimestamp: expire })).status,
        ).toBe(204);
      await call("POST", `/api/v1/payments/${part.id}/captures`, {
        amount: 100,
        captureIdentifier: "c1",
        timestamp: ts(),
        authorizationAttemptId: null,
      });
      emu.clock.advance(3600_000);
      expect(await get(part.id)).toMatchObject({
        status: "Captured",
        capturedAmount: 100,
        expiredAmount: 900,
      });
      expect(await get(none.id)).toMatchObject({ status: "ReservationExpired", expiredAmount: 1000 });
      const kinds = emu
        .ledger()
        .filter((e) => e.id === none.id)
        .map((e) => e.kind);
      expect(kinds).toEqual(["reserved", "expired"]);
      expect(
        (
          await call("POST", `/api/v1/payments/${none.id}/captures`, {
            amount: 1,
            captureIdentifier: "c2",
            timestamp: ts(),
          })
        ).status,
      ).toBe(409);
    });

    it("Authorized → Cancelled by cancels of the whole amount; AwaitingAuthorization → Cancelled", async () => {
      const { id } = await authorized();
      const cancel = (p: string, amount: number, cancelIdentifier: string) =>
        call("POST", `/api/v1/payments/${p}/cancels`, { amount, cancelIdentifier, timestamp: ts() });
      expect((await cancel(id, 400, "a")).status).toBe(200);
      expect(await get(id)).toMatchObject({ status: "Authorized", cancelledAmount: 400 });
      expect(await cancel(id, 601, "b")).toMatchObject({ status: 409, body: { code: "AmountTooHigh" } });
      expect((await cancel(id, 600, "b")).status).toBe(200);
      expect(await get(id)).toMatchObject({ status: "Cancelled", cancelledAmount: 1000, capturedAmount: 0 });
      expect(
        emu
          .ledger()
          .filter((e) => e.paymentId === id)
          .map((e) => [e.kind, e.amount]),
      ).toEqual([
        ["cancelled", 400],
        ["cancelled", 600],
      ]);
      const waiting = await start();
      const s = await simulate(waiting, CREDIT);
      expect((await cancel(waiting, 1000, "c")).status).toBe(200);
      expect(await get(waiting)).toMatchObject({ status: "Cancelled" });
      const late = await call(
        "PATCH",
        `/api/v1/payments/${waiting}/authorizationattempts/${s.body.authorizationAttemptId}`,
        { succeeded: true },
      );
      expect(late).toMatchObject({ status: 409, body: { code: "InvalidState" } });
      expect(emu.ledger().filter((e) => e.id === waiting || e.paymentId === waiting)).toEqual([]);
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
  },
);
