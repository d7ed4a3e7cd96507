import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasOpenssl, selfSignedCertificate } from "../testing/httpsReceiver.js";
import { DK_USER, o, SubsKit } from "./testkit.test-support.js";

const skip = !hasOpenssl();
if (skip) console.warn("openssl missing: deprecated subscriptions interface tests skipped");

describe.skipIf(skip)("subscriptions: deprecated merchant-based interface over mutual TLS (seed 000)", () => {
  let kit: SubsKit;
  let withCert: Agent;
  let noCert: Agent;
  let strangerCert: Agent;
  beforeAll(async () => {
    const server = selfSignedCertificate("127.0.0.1");
    const client = selfSignedCertificate("merchant-client");
    const stranger = selfSignedCertificate("stranger");
    kit = await SubsKit.start({
      subscriptions: { deprecatedTls: { cert: server.cert, key: server.key, clientCerts: [client.cert] } },
    });
    withCert = new Agent({ connect: { ca: server.cert, cert: client.cert, key: client.key } });
    noCert = new Agent({ connect: { ca: server.cert } });
    strangerCert = new Agent({ connect: { ca: server.cert, cert: stranger.cert, key: stranger.key } });
  });
  afterAll(async () => {
    await kit?.close();
    await Promise.all([withCert?.destroy(), noCert?.destroy(), strangerCert?.destroy()]);
  });

  async function dep(
    method: string,
    path: string,
    body?: unknown,
    opts: { agent?: Agent; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: unknown }> {
    const d = kit.info.deprecated;
    const headers: Record<string, string> = opts.headers ?? {
      "x-gateway-client-id": d.gatewayClientId,
      "x-gateway-client-secret": d.gatewayClientSecret,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await request(`${d.baseUrl}${path}?api-version=1.1`, {
      method: method as "GET",
      body: body === undefined ? undefined : JSON.stringify(body),
      headers,
      dispatcher: opts.agent ?? withCert,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text === "" ? undefined : JSON.parse(text) };
  }

  const agreement = (extra: Record<string, unknown> = {}) => {
    const b = kit.agreementBody(extra);
    return b;
  };

  it("needs a registered client certificate and the x-gateway-client-* headers (401 otherwise)", async () => {
    expect(kit.info.deprecated.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await dep("GET", "/api/merchants/me/agreements", undefined, { agent: noCert })).status).toBe(401);
    expect(
      (await dep("GET", "/api/merchants/me/agreements", undefined, { agent: strangerCert })).status,
    ).toBe(401);
    expect((await dep("GET", "/api/merchants/me/agreements", undefined, { headers: {} })).status).toBe(401);
    expect(
      (
        await dep("GET", "/api/merchants/me/agreements", undefined, {
          headers: {
            "x-gateway-client-id": kit.info.deprecated.gatewayClientId,
            "x-gateway-client-secret": "wrong",
          },
        })
      ).status,
    ).toBe(401);
    expect((await dep("GET", "/api/merchants/me/agreements")).status).toBe(200);
    expect((await kit.call("GET", "/api/merchants/me/agreements", undefined, null)).status).toBe(401);
  });

  it("400 BadRequest InputError for invalid data; PATCH /api/merchants/me sets the callback URL", async () => {
    const bad = await dep("PATCH", "/api/merchants/me", [
      { op: "replace", path: "/payment_status_callback_url", value: "http://x.example/cb" },
    ]);
    expect(bad.status).toBe(400);
    expect(o(bad.body).error).toBe("BadRequest");
    expect(o(o(bad.body).error_description)).toMatchObject({ error_type: "InputError" });
    expect(typeof o(o(bad.body).error_description).correlation_id).toBe("string");
    const ok = await dep("PATCH", "/api/merchants/me", [
      { op: "replace", path: "/payment_status_callback_url", value: `${kit.rx.url}/payments` },
    ]);
    expect(ok.status).toBe(204);
    expect((await dep("POST", "/api/merchants/me/agreements", agreement({ frequency: 52 }))).status).toBe(
      400,
    );
    expect(
      (await dep("POST", "/api/merchants/me/agreements", agreement({ next_payment_date: kit.day(5) })))
        .status,
    ).toBe(400);
    expect(
      (
        await dep(
          "POST",
          "/api/merchants/me/agreements",
          agreement({ one_off_payment: { amount: 1, description: "x", external_id: "y" } }),
        )
      ).status,
    ).toBe(400);
  });

  it("agreements: create, list, patch; 404 without body for a missing agreement", async () => {
    const r = await dep("POST", "/api/merchants/me/agreements", agreement({ frequency: 26 }));
    expect(r.status).toBe(201);
    const id = String(o(r.body).id);
    const list = await dep("GET", "/api/merchants/me/agreements");
    expect((list.body as Record<string, unknown>[]).map((a) => a.id)).toContain(id);
    expect(
      (
        await dep("PATCH", `/api/merchants/me/agreements/${id}`, [
          { op: "replace", path: "/amount", value: "10.00" },
        ])
      ).status,
    ).toBe(204);
    const missing = await dep("PATCH", "/api/merchants/me/agreements/00000000-0000-0000-0000-000000000000", [
      { op: "replace", path: "/amount", value: "1.00" },
    ]);
    expect(missing).toEqual({ status: 404, body: undefined });
    const pendingCancel = await dep("PATCH", `/api/merchants/me/agreements/${id}`, [
      { op: "replace", path: "/status", value: "Canceled" },
    ]);
    expect(pendingCancel.status).toBe(412);
    expect(o(pendingCancel.body)).toMatchObject({ error: "PreconditionFailed" });
  });

  it("payment requests: 202; duplicate → 412 PreconditionFailed; 30-char external_id; 32-day window (50012); 404", async () => {
    const r = await dep("POST", "/api/merchants/me/agreements", agreement());
    const id = String(o(r.body).id);
    await kit.sim(`agreements/${id}/accept`, { phoneNumber: DK_USER });
    const pay = (extra: Record<string, unknown> = {}) => ({
      ...kit.payment(id, { external_id: "dep-1" }),
      ...extra,
    });
    const ok = await dep("POST", "/api/merchants/me/paymentrequests", [pay()]);
    expect(ok.status).toBe(202);
    kit.advance(0);
    const dup = await dep("POST", "/api/merchants/me/paymentrequests", [pay()]);
    expect(dup.status).toBe(412);
    expect(o(o(dup.body).error_description)).toMatchObject({ error_type: "PreconditionError" });
    expect(
      (await dep("POST", "/api/merchants/me/paymentrequests", [pay({ external_id: "x".repeat(31) })])).status,
    ).toBe(400);
    expect((await dep("POST", "/api/merchants/me/paymentrequests", [pay({ amount: 0 })])).status).toBe(400);
    expect(
      (await dep("POST", "/api/merchants/me/paymentrequests", [pay({ grace_period_days: 1 })])).status,
    ).toBe(400);
    expect(
      (
        await dep("POST", "/api/merchants/me/paymentrequests", [
          pay({ agreement_id: "00000000-0000-0000-0000-000000000000" }),
        ])
      ).status,
    ).toBe(404);
    const far = await dep("POST", "/api/merchants/me/paymentrequests", [
      pay({ external_id: "far", due_date: kit.day(33) }),
    ]);
    const farId = String(o((o(far.body).pending_payments as unknown[])[0]).payment_id);
    kit.advance(120_000);
    expect(await kit.paymentEvent((e) => e.payment_id === farId)).toMatchObject({ status_code: 50012 });
  });

  it("500 InternalServerError with the seed's body (armed through the admin API)", async () => {
    await kit.admin("POST", "system-declines", { deprecated500: 1 });
    const r = await dep("GET", "/api/merchants/me/agreements");
    expect(r.status).toBe(500);
    expect(o(r.body).error).toBe("InternalServerError");
    expect(o(o(r.body).error_description)).toMatchObject({ error_type: "ServerError" });
    expect((await dep("GET", "/api/merchants/me/agreements")).status).toBe(200);
  });
});
