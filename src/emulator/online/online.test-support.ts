/**
 * Shared setup of the online-payment emulator tests (online*.test.ts): the emulator with an HTTPS callback
 * receiver and one merchant, and the HTTP calls the tests make (initiate, simulate the user, authorize).
 */
import { request } from "undici";
import { expect } from "vitest";
import type { Emulator } from "../index.js";
import { type CallbackEmulator, startCallbackEmulator } from "../testing/callbackEmulator.js";
import type { HttpsReceiver } from "../testing/httpsReceiver.js";

export const START = Date.parse("2026-03-02T10:00:00Z");
export const CREDIT = "+4520031801";
export const DEBIT = "+4520031802";
export const YOUNG = "+4520039915";

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** The running emulator, its callback receiver and the merchant made at start. */
export interface OnlineSetup {
  emu: Emulator;
  rx: HttpsReceiver;
  merchantId: string;
}

/**
 * The test harness of one file: `open` (in beforeAll) starts the receiver and the emulator and creates the
 * merchant (externalId "ext-1"); `close` (in afterAll) stops them; the rest are the calls the tests make.
 */
export function onlineHarness() {
  let env: CallbackEmulator;
  let emu: Emulator;
  let rx: HttpsReceiver;
  let merchantId: string;
  let n = 0;

  async function open(): Promise<OnlineSetup> {
    env = await startCallbackEmulator(START, {
      seed: { users: [{ phone: YOUNG, features: ["creditCard"], age: 15 }] },
    });
    emu = env.emu;
    rx = env.rx;
    const m = await call("POST", "/api/v1/merchants", merchant());
    expect(m.status).toBe(201);
    merchantId = String(m.body.merchantId);
    return { emu, rx, merchantId };
  }
  async function close(): Promise<void> {
    await env.close();
  }

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

  return { open, close, call, merchant, initiate, start, simulate, get, ts, authorized };
}
