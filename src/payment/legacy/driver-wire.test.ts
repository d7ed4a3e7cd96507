import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../core/clock.js";
import { isPaymentError, type PaymentErrorCode } from "../errors.js";
import { createLegacyDriver, type LegacyDriverOptions } from "./driver.js";
import { legacyTestWorld } from "./legacy.test-support.js";
import { LegacyOptionsError } from "./options.js";
import { authorizationHeader, merchantKeyBytes, paymentStartHmac } from "./signing.js";

/** What the driver puts on the wire: a loopback server records the exact request. */
interface Seen {
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

async function recorder(answer: { status: number; body: string }): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        url: `http://${req.headers.host}${req.url}`,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
    });
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { base: `http://127.0.0.1:${port}`, seen };
}

const options = (baseUrl: string, clock = new ManualClock(1_700_000_000_000)): LegacyDriverOptions => ({
  baseUrl,
  apiVersion: "V08",
  merchantId: "POSDK99999",
  locationId: "88888",
  posId: "vend-unit-7",
  posUnitId: "123456789012345",
  posName: "Machine 7",
  bulkRef: "",
  captureType: "full",
  apiKey: "0f8fad5b-d9cb-469f-a165-70867728950e",
  merchantKey: "TestMerchantKey-0001",
  requestTimeoutMs: 500,
  clock,
  ownsOrder: () => false,
});

describe("wire format (pos-legacy §1, §3, §4)", () => {
  it("signs the exact body it sends and carries the seed's PaymentStart HMAC (project vector)", async () => {
    const { base, seen } = await recorder({
      status: 200,
      body: '{"ReCalc":0,"CustomerToken":null,"CustomerReceiptToken":null}',
    });
    const d = createLegacyDriver(options(base));
    await d.start({ orderId: "V7-000042", amount: 1250, idempotencyKey: "k", mode: "payment" });
    await d.close();
    const req = seen[0];
    if (!req) throw new Error("no request");
    expect(req.url).toBe(`${base}/API/V08/PaymentStart`);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers.authorization).toBe(
      authorizationHeader(options(base).apiKey, req.url, req.body, 1_700_000_000),
    );
    const body = JSON.parse(req.body) as Record<string, unknown>;
    expect(body).toEqual({
      MerchantId: "POSDK99999",
      LocationId: "88888",
      PoSId: "vend-unit-7",
      OrderId: "V7-000042",
      Amount: "12.50",
      BulkRef: "",
      Action: "Start",
      CustomerTokenCalc: 1,
      HMAC: "UWr7pa6VNghDRfL9VXHBfw5RW/83xw5ohOqmD87XNYs=",
    });
    expect(body.HMAC).toBe(
      paymentStartHmac(merchantKeyBytes("TestMerchantKey-0001"), {
        merchantId: "POSDK99999",
        locationId: "88888",
        posId: "vend-unit-7",
        orderId: "V7-000042",
        amount: "12.50",
        bulkRef: "",
      }),
    );
  });

  it("reads response fields case-insensitively", async () => {
    const { base } = await recorder({
      status: 200,
      body: '{"posid":"vend-unit-7","RESERVATIONSTATUS":100,"amount":12.5}',
    });
    const d = createLegacyDriver(options(base));
    const ref = { id: "o", orderId: "o", mode: "reservation" as const };
    expect(await d.status(ref)).toMatchObject({ state: "reserved", amount: 1250 });
    await d.close();
  });

  it("maps HTTP answers: 400 StatusCode → typed error, 401 → unauthorized, 503 → ambiguous, junk 200 → ambiguous", async () => {
    const cases: [number, string, PaymentErrorCode, boolean][] = [
      [400, '{"StatusCode":30,"StatusText":"nope"}', "notFound", false],
      [400, "{}", "invalid", false],
      [401, "", "unauthorized", false],
      [503, "", "unavailable", true],
      [200, "<html>", "unavailable", true],
      [404, "", "invalid", false],
    ];
    for (const [status, body, code, ambiguous] of cases) {
      const { base } = await recorder({ status, body });
      const d = createLegacyDriver(options(base));
      const err = await d.status({ id: "o", orderId: "o", mode: "payment" }).catch((e) => e);
      expect([status, isPaymentError(err, code), err.ambiguous]).toEqual([status, true, ambiguous]);
      await d.close();
      await new Promise<void>((r) => server?.close(() => r()));
      server = null;
    }
  });

  it("a refused connection is unavailable and not ambiguous", async () => {
    const { base } = await recorder({ status: 200, body: "{}" });
    await new Promise<void>((r) => server?.close(() => r()));
    server = null;
    const d = createLegacyDriver(options(base));
    const err = await d.status({ id: "o", orderId: "o", mode: "payment" }).catch((e) => e);
    expect(isPaymentError(err, "unavailable") && !err.ambiguous).toBe(true);
    await d.close();
  });

  it("refuses options that cannot work, naming the option and never a secret", () => {
    const bad = { ...options("http://127.0.0.1:1"), posUnitId: "12", apiKey: "secret-api-key" };
    expect(() => createLegacyDriver(bad)).toThrow(LegacyOptionsError);
    expect(() => createLegacyDriver(bad)).toThrow(/posUnitId/);
    expect(() => createLegacyDriver({ ...options("ftp://x"), apiVersion: "8" })).toThrow(/baseUrl/);
  });
});

describe("credentials against the emulator", () => {
  it("a wrong API key is unauthorized (401); a wrong MerchantKey fails PaymentStart with 10; non-Latin-1 is refused locally", async () => {
    const w = await legacyTestWorld();
    try {
      const wrongKey = w.driverWith({ apiKey: "not-the-key" });
      expect(await wrongKey.open().catch((e) => isPaymentError(e, "unauthorized"))).toBe(true);
      await w.driver.open();
      const wrongMerchantKey = w.driverWith({ merchantKey: "wrong" });
      const err = await wrongMerchantKey
        .start({ orderId: "W-1", amount: 100, idempotencyKey: "k", mode: "payment" })
        .catch((e) => e);
      expect(isPaymentError(err, "invalid")).toBe(true);
      expect(err.details).toMatchObject({ status: 400, serviceCode: "10" });
      expect(String(err.message)).not.toContain(w.emu.info.legacy.merchantKey);
      const local = await w.driver
        .start({ orderId: "W-€", amount: 100, idempotencyKey: "k", mode: "payment" })
        .catch((e) => e);
      expect(isPaymentError(local, "invalid")).toBe(true);
      expect(w.emu.stats().byRoute["POST /API/V08/PaymentStart"]).toBe(1);
    } finally {
      await w.close();
    }
  });
});
