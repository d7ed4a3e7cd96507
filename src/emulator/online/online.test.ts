/**
 * The emulator's online payments (seed 002 §Online payments) over HTTP: client authentication, merchants,
 * and the field rules of initiating a payment.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../index.js";
import { type HttpsReceiver, hasOpenssl } from "../testing/httpsReceiver.js";
import { onlineHarness } from "./online.test-support.js";

describe.skipIf(!hasOpenssl())(
  "online payments (seed 002 §Online payments) over HTTP, callbacks over HTTPS",
  () => {
    let emu: Emulator;
    let rx: HttpsReceiver;
    let merchantId: string;
    const { open, close, call, merchant, initiate } = onlineHarness();

    beforeAll(async () => {
      ({ emu, rx, merchantId } = await open());
    });
    afterAll(close);

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
  },
);
