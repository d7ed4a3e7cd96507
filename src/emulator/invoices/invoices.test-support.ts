import { request } from "undici";
import { expect } from "vitest";
import type { Emulator } from "../index.js";
import { type CallbackEmulator, startCallbackEmulator } from "../testing/callbackEmulator.js";
import type { HttpsReceiver } from "../testing/httpsReceiver.js";

/**
 * The invoices HTTP tests' harness (invoices*.test.ts): an emulator with callbacks to an HTTPS receiver, the
 * merchant's calls, a valid invoice body, the user simulation, and the wait for an invoice's callbacks.
 */

const START = Date.parse("2026-03-02T10:00:00Z");
export const DAY = 86_400_000;
export const USER = "+4520031801";
export const POOR = "+4520031806";

interface Answer {
  status: number;
  body: unknown;
}

export function article(total = 125, vat = 25, rate = 25) {
  return {
    ArticleNumber: "A-1",
    ArticleDescription: "Coffee beans",
    VATRate: rate,
    TotalVATAmount: vat,
    TotalPriceIncludingVat: total,
    Unit: "kg",
    Quantity: 1.125,
    PricePerUnit: 111.111,
    PriceReduction: 0,
    PriceDiscount: 0,
    Bonus: 0,
  };
}

/** What the harness started: the emulator, the receiver, the invoices origin, merchant and first issuer. */
export interface InvoicesEnv {
  emu: Emulator;
  rx: HttpsReceiver;
  base: string;
  mid: string;
  issuer: string;
}

/** The harness; `start` in beforeAll, `stop` in afterAll. */
export function invoicesHarness() {
  let env: CallbackEmulator;
  let emu: Emulator;
  let rx: HttpsReceiver;
  let base: string;
  let mid: string;
  let issuer: string;
  let n = 0;

  async function start(): Promise<InvoicesEnv> {
    env = await startCallbackEmulator(START);
    emu = env.emu;
    rx = env.rx;
    base = emu.info.invoices.baseUrl;
    mid = emu.info.invoices.merchantId;
    issuer = emu.info.invoices.issuers[0]?.id ?? "";
    return { emu, rx, base, mid, issuer };
  }
  async function stop(): Promise<void> {
    await env.close();
  }

  async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const r = await request(`${base}${path}`, {
      method: method as "GET",
      headers: {
        authorization: `Bearer ${emu.info.invoices.accessToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await r.body.text();
    return { status: r.statusCode, body: text === "" ? undefined : JSON.parse(text) };
  }

  function invoice(over: Record<string, unknown> = {}) {
    n += 1;
    return {
      InvoiceIssuer: issuer,
      ConsumerAlias: { Alias: USER, AliasType: "Phone" },
      TotalAmount: 125,
      TotalVatAmount: 25,
      CountryCode: "DK",
      CurrencyCode: "DKK",
      InvoiceNumber: `INV-${n}`,
      IssueDate: "2026-03-01",
      OrderDate: "2026-03-01",
      DeliveryDate: "2026-03-01",
      DueDate: new Date(emu.clock.now() + 10 * DAY).toISOString().slice(0, 10),
      InvoiceArticles: [article()],
      ...over,
    };
  }

  const sim = (id: string, action: string, body: unknown) =>
    call("POST", `/app/usersimulation/invoices/${id}/${action}`, body);
  const status = async (id: string) =>
    ((await call("GET", `/api/v1/merchants/${mid}/invoices/${id}/status`)).body as { Status: string }).Status;
  async function direct(over: Record<string, unknown> = {}): Promise<string> {
    const r = await call("POST", `/api/v1/merchants/${mid}/invoices`, invoice(over));
    expect(r.status).toBe(202);
    return (r.body as { InvoiceId: string }).InvoiceId;
  }
  /** Runs the callback job (every 5 s of emulator time) and waits for the receiver. */
  async function callbacksFor(id: string, statuses: string[]) {
    emu.clock.advance(5000);
    const found = await rx.waitFor(
      (r) =>
        Array.isArray(r.json) &&
        (r.json as { InvoiceId: string; Status: string }[]).some(
          (e) => e.InvoiceId === id && e.Status === statuses.at(-1),
        ),
    );
    const all = rx.received.flatMap((r) =>
      Array.isArray(r.json) ? (r.json as Record<string, unknown>[]) : [],
    );
    const mine = all.filter((e) => e.InvoiceId === id);
    expect(mine.map((e) => e.Status)).toEqual(statuses);
    return { elements: mine, request: found };
  }

  return { start, stop, call, invoice, sim, status, direct, callbacksFor };
}
