import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasOpenssl } from "../testing/httpsReceiver.js";
import { DK_USER, FAILING_USER, o, SubsKit } from "./testkit.test-support.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: subscriptions agreement tests skipped");

describe.skipIf(skip)("subscriptions: auth, provider and agreements (seed 000)", () => {
  let kit: SubsKit;
  beforeAll(async () => {
    kit = await SubsKit.start();
    await kit.useReceiver();
  });
  afterAll(async () => {
    await kit?.close();
  });

  const agreementCallback = (id: string, code: number) =>
    kit.rx.waitFor((r) => o(r.json).agreement_id === id && o(r.json).status_code === code);

  it("needs a token; the merchant lookup lists the providers", async () => {
    expect((await kit.call("GET", "/api/merchants/me", undefined, null)).status).toBe(401);
    expect((await kit.call("GET", `/api/providers/${kit.pid}/agreements/x`, undefined, "bogus")).status).toBe(
      401,
    );
    const bad = await kit.raw("POST", "/subscriptions-auth/connect/token", {
      text: "grant_type=client_credentials&client_id=x&client_secret=y",
      contentType: "application/x-www-form-urlencoded",
      token: null,
    });
    expect(bad.status).toBe(401);
    const malformed = await fetch(kit.info.tokenUrl, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from("%E0%A4%A:x").toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    expect(malformed.status).toBe(401);
    const r = await kit.call("GET", "/api/merchants/me");
    expect(r.status).toBe(200);
    const [m] = r.body as Record<string, unknown>[];
    expect(o(m).Id).toBe(kit.info.merchantId);
    const providers = o(m).SubscriptionProviders as Record<string, unknown>[];
    expect(providers.map((p) => p.SubscriptionProviderId)).toEqual([kit.pid]);
    expect(providers[0]?.Status).toBe("Enabled");
    expect(
      (await kit.call("GET", "/api/providers/00000000-0000-0000-0000-000000000000/agreements/x")).status,
    ).toBe(404);
  });

  it("refuses a non-https payment callback URL with 400 and the https message", async () => {
    const r = await kit.api("PATCH", "", [
      { op: "replace", path: "/payment_status_callback_url", value: "http://merchant.example/cb" },
    ]);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/hyperlink reference must use the https scheme/);
    const e = o(o(r.body).error_description);
    expect(o(r.body).error).toBe("BadRequest");
    expect(e.error_type).toBe("InputError");
    expect(typeof e.correlation_id).toBe("string");
  });

  it("sets callback auth: Basic, API key as token68 (refusing others), OAuth client credentials", async () => {
    expect((await kit.api("PUT", "/auth/apikey", { api_key: "has space" })).status).toBe(400);
    expect((await kit.api("PUT", "/auth/apikey", { api_key: "abc.DEF-123~+/==" })).status).toBe(204);
    expect(
      (await kit.api("PUT", "/auth/oauth2", { token_url: "http://x", client_id: "a", client_secret: "b" }))
        .status,
    ).toBe(400);
    expect((await kit.api("PUT", "/auth/basic", { username: "merchant", password: "s3cret" })).status).toBe(
      204,
    );
    const id = String((await kit.createAgreement()).id);
    await kit.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER });
    const got = await agreementCallback(id, 0);
    expect(got.headers.authorization).toBe(`Basic ${Buffer.from("merchant:s3cret").toString("base64")}`);
  });

  it("validates the agreement request synchronously (400)", async () => {
    const cases: Record<string, unknown>[] = [
      { currency: "EUR" },
      { country_code: "SE" },
      { plan: "x".repeat(31) },
      { description: "x".repeat(61) },
      { frequency: 3 },
      { expiration_timeout_minutes: 4 },
      { expiration_timeout_minutes: 20161 },
      { links: [] },
      {
        links: [
          { rel: "user-redirect", href: "http://merchant.example/return" },
          { rel: "success-callback", href: "https://a.example/" },
          { rel: "cancel-callback", href: "https://a.example/" },
        ],
      },
      { amount: "-1.00" },
      { amount: "1.005" },
      { one_off_payment: { amount: 0, description: "x", external_id: "y" } },
    ];
    for (const c of cases) {
      const r = await kit.api("POST", "/agreements", kit.agreementBody(c));
      expect(r.status, JSON.stringify(c)).toBe(400);
    }
    const wrongType = await kit.raw("POST", `/api/providers/${kit.pid}/agreements`, {
      text: JSON.stringify(kit.agreementBody()),
      contentType: "text/plain",
    });
    expect(wrongType.status).toBe(400);
  });

  it("creates a Pending agreement with a mobile-pay landing link; Accepted 0 to success-callback", async () => {
    const body = await kit.createAgreement({ mobile_phone_number: "4520031801", frequency: 0 });
    const id = String(body.id);
    const [link] = body.links as Record<string, unknown>[];
    expect(link?.rel).toBe("mobile-pay");
    const href = new URL(String(link?.href));
    expect(href.searchParams.get("id")).toBe(id);
    expect(href.searchParams.get("flow")).toBe("agreement");
    expect(href.searchParams.get("redirectUrl")).toBe("https://merchant.example/return");
    expect(href.searchParams.get("countryCode")).toBe("DK");
    expect(href.searchParams.get("phone")).toBe("4520031801");
    expect((await kit.call("GET", `${href.pathname}${href.search}`, undefined, null)).status).toBe(200);
    expect(o((await kit.api("GET", `/agreements/${id}`)).body).status).toBe("Pending");
    expect((await kit.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER })).status).toBe(200);
    const cb = await agreementCallback(id, 0);
    expect(cb.path).toBe("/agreement/success");
    expect(o(cb.json)).toMatchObject({ status: "Accepted", external_id: "agr-1" });
    expect(String(o(cb.json).timestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((await kit.call("GET", `${href.pathname}${href.search}`, undefined, null)).status).toBe(410);
    expect((await kit.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER })).status).toBe(409);
  });

  it("Rejected 40000 when the user cancels sign-up", async () => {
    const id = String((await kit.createAgreement()).id);
    await kit.sim(`agreements/${id}/reject`);
    const cb = await agreementCallback(id, 40000);
    expect(cb.path).toBe("/agreement/cancel");
    expect(o(cb.json)).toMatchObject({ status: "Rejected", status_text: "Agreement rejected by user" });
  });

  it("Expired 40001 after expiration_timeout_minutes", async () => {
    const id = String((await kit.createAgreement({ expiration_timeout_minutes: 5 })).id);
    kit.advance(4 * 60_000);
    expect(o((await kit.api("GET", `/agreements/${id}`)).body).status).toBe("Pending");
    kit.advance(60_000);
    const cb = await agreementCallback(id, 40001);
    expect(o(cb.json)).toMatchObject({ status: "Expired", status_text: "Pending agreement expired" });
  });

  it("Canceled 40002 by user, 40003 by merchant (cancelling a reserved one-off), 40004 by system", async () => {
    const byUser = await kit.activeAgreement();
    await kit.sim(`agreements/${byUser}/cancel`);
    expect(o((await agreementCallback(byUser, 40002)).json).status_text).toBe("Agreement canceled by user");

    const byMerchant = await kit.activeAgreement();
    const one = await kit.api("POST", `/agreements/${byMerchant}/oneoffpayments`, {
      amount: 10,
      description: "Extra",
      external_id: "oo-1",
      links: [{ rel: "user-redirect", href: "https://merchant.example/r" }],
    });
    const oneId = String(o(one.body).id);
    await kit.sim(`oneoffpayments/${oneId}/accept`);
    expect((await kit.sim(`agreements/${byMerchant}/cancel`)).status).toBe(409);
    expect(
      (
        await kit.api("PATCH", `/agreements/${byMerchant}`, [
          { op: "replace", path: "/status", value: "Canceled" },
        ])
      ).status,
    ).toBe(204);
    expect(o((await agreementCallback(byMerchant, 40003)).json).status_text).toBe(
      "Agreement canceled by merchant",
    );
    expect(o((await kit.api("GET", `/agreements/${byMerchant}/oneoffpayments/${oneId}`)).body).status).toBe(
      "Cancelled",
    );
    expect(
      kit.emu
        .ledger()
        .filter((e) => e.id === oneId)
        .map((e) => e.kind),
    ).toEqual(["reserved", "cancelled"]);

    const bySystem = await kit.activeAgreement("+4520031802");
    await kit.sim("user", { phoneNumber: "+4520031802", deleted: true });
    expect(o((await agreementCallback(bySystem, 40004)).json).status_text).toBe(
      "Agreement canceled by system",
    );
  });

  it("updates an agreement by JSON Patch; refuses changes to a finished one", async () => {
    const id = await kit.activeAgreement();
    const r = await kit.api("PATCH", `/agreements/${id}`, [
      { op: "replace", path: "/amount", value: "120.00" },
      { op: "replace", path: "/plan", value: "Premium" },
    ]);
    expect(r.status).toBe(204);
    expect(o((await kit.api("GET", `/agreements/${id}`)).body)).toMatchObject({
      amount: 120,
      plan: "Premium",
    });
    expect(
      (await kit.api("PATCH", `/agreements/${id}`, [{ op: "add", path: "/plan", value: "x" }])).status,
    ).toBe(400);
    await kit.api("PATCH", `/agreements/${id}`, [{ op: "replace", path: "/status", value: "Canceled" }]);
    expect(
      (await kit.api("PATCH", `/agreements/${id}`, [{ op: "replace", path: "/plan", value: "y" }])).status,
    ).toBe(409);
  });

  it("a Pending agreement with a one-off expires both: 40001 and a batched Expired 50008", async () => {
    const body = await kit.createAgreement({
      expiration_timeout_minutes: 5,
      one_off_payment: { amount: "5.00", description: "Fee", external_id: "exp-fee" },
    });
    kit.advance(5 * 60_000);
    await agreementCallback(String(body.id), 40001);
    kit.advance(120_000);
    const e = await kit.paymentEvent((x) => x.payment_id === body.one_off_payment_id);
    expect(e).toMatchObject({ status: "Expired", status_code: 50008, payment_type: "OneOff" });
    const r = await kit.call("GET", `/api/providers/${kit.pid}/agreements/${String(body.id)}`);
    expect(r.status).toBe(200);
    const echoed = await kit.raw("PATCH", `/api/providers/${kit.pid}`, {
      text: "[]",
      contentType: "application/json",
    });
    expect(echoed.status).toBe(400);
  });

  it("with one_off_payment: activated only when the initial amount is reserved; two callbacks", async () => {
    const body = await kit.createAgreement({
      one_off_payment: { amount: "25.00", description: "Start-up fee", external_id: "first" },
    });
    const id = String(body.id);
    const oneId = String(body.one_off_payment_id);
    expect((await kit.sim(`agreements/${id}/accept`, { phoneNumber: FAILING_USER })).status).toBe(409);
    expect(o((await kit.api("GET", `/agreements/${id}`)).body).status).toBe("Pending");
    expect((await kit.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER })).status).toBe(200);
    await agreementCallback(id, 0);
    const paid = await kit.rx.waitFor(
      (r) => r.path === "/payments" && Array.isArray(r.json) && o(r.json[0]).payment_id === oneId,
    );
    expect(o((paid.json as unknown[])[0])).toMatchObject({
      status: "Reserved",
      status_code: 0,
      payment_type: "OneOff",
      amount: 25,
    });
  });
});
