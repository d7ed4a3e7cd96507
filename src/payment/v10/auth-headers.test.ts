import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { isPaymentError } from "../errors.js";
import {
  FAKE_TOKEN_PATH,
  type FakeReply,
  type FakeService,
  startFakeService,
  tokenReply,
} from "./fake-service.test-support.js";
import { createV10Driver } from "./index.js";
import { basicV10Reply, RecordingClock, testOptions } from "./v10.test-support.js";

let fake: FakeService | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

const payment = (id: string) => ({
  status: 200,
  body: {
    paymentId: id,
    posId: "pos-1",
    orderId: "o-1",
    status: "Initiated",
    amount: 12.5,
    pollDelayInMs: 1000,
  },
});

describe("V10 headers and token (pos-v10 §2, §3)", () => {
  it("sends the required headers, the key only on creating POSTs, one CorrelationId per transaction", async () => {
    fake = await startFakeService((req) => {
      const basic = basicV10Reply(req);
      if (basic) return basic;
      if (req.method === "POST" && req.path === "/v10/payments")
        return { status: 200, body: { paymentId: "p-1" } };
      if (req.path === "/v10/payments/p-1") return payment("p-1");
      if (req.path === "/v10/payments/p-1/capture") return { status: 200 };
      return { status: 404 };
    });
    const clock = new RecordingClock();
    const driver = createV10Driver(
      testOptions({ baseUrl: fake.url, tokenUrl: fake.url + FAKE_TOKEN_PATH }, { clock }),
    );
    await driver.open();
    const ref = await driver.start({ orderId: "o-1", amount: 1250, idempotencyKey: "key-o-1" });
    await driver.status(ref);
    await driver.capture(ref, 1250);
    await driver.close();

    const api = fake.requests.filter((r) => r.path.startsWith("/v10/"));
    expect(api.length).toBe(5);
    for (const r of api) {
      expect(r.headers.authorization).toBe("Bearer token-1");
      expect(r.headers["x-service-merchant-vat-number"]).toBe("DK12345678");
      expect(r.headers["x-service-client-system-name"]).toBe("vendd");
      expect(r.headers["x-service-client-system-version"]).toBe("0.1.0");
      expect(r.headers.correlationid).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    }
    const [initiate, poll, capture] = api.slice(2);
    expect(initiate?.headers["x-service-idempotency-key"]).toBe("key-o-1");
    expect(initiate?.headers["content-type"]).toBe("application/json");
    expect(initiate?.json).toEqual({
      posId: "pos-1",
      orderId: "o-1",
      amount: 12.5,
      currencyCode: "DKK",
      plannedCaptureDelay: "None",
    });
    expect(poll?.headers["x-service-idempotency-key"]).toBeUndefined();
    expect(capture?.headers["x-service-idempotency-key"]).toBeUndefined();
    expect(capture?.json).toEqual({ amount: 12.5 });
    // One transaction, one CorrelationId.
    expect(new Set([initiate, poll, capture].map((r) => r?.headers.correlationid)).size).toBe(1);
  });

  it("gets the token by client credentials, caches it, and refreshes it early (min(10 min, lifetime/2))", async () => {
    let issued = 0;
    fake = await startFakeService((req) => {
      if (req.path === FAKE_TOKEN_PATH) {
        issued += 1;
        return tokenReply(`token-${issued}`, issued === 1 ? 3600 : 60);
      }
      return basicV10Reply(req) ?? { status: 404 };
    });
    const clock = new RecordingClock();
    const driver = createV10Driver(
      testOptions({ baseUrl: fake.url, tokenUrl: fake.url + FAKE_TOKEN_PATH }, { clock }),
    );
    await driver.open();
    await driver.open();
    expect(issued).toBe(1);
    const tokenReq = fake.requests[0];
    expect(tokenReq?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(tokenReq?.headers.authorization).toBe(
      `Basic ${Buffer.from("client-1:secret-canary-7f3a").toString("base64")}`,
    );
    expect(Object.fromEntries(new URLSearchParams(tokenReq?.text))).toEqual({
      grant_type: "client_credentials",
      merchant_vat: "DK12345678",
    });

    clock.advance(3000 * 1000 - 1); // 3600 s lifetime: refresh 600 s early
    await driver.open();
    expect(issued).toBe(1);
    clock.advance(1);
    await driver.open();
    expect(issued).toBe(2);
    clock.advance(30_000 - 1); // 60 s lifetime: refresh at half
    await driver.open();
    expect(issued).toBe(2);
    clock.advance(1);
    await driver.open();
    expect(issued).toBe(3);
    await driver.close();
  });

  it("on 401 fetches a new token once and repeats the call once", async () => {
    let issued = 0;
    let rejectNext = 1;
    fake = await startFakeService((req): FakeReply => {
      if (req.path === FAKE_TOKEN_PATH) {
        issued += 1;
        return tokenReply(`token-${issued}`);
      }
      if (req.path === "/v10/pointofsales/pos-1/checkin") {
        if (rejectNext > 0) {
          rejectNext -= 1;
          return { status: 401 };
        }
        return { status: 200, body: { isUserCheckedIn: true, pollDelayInMs: 1000 } };
      }
      return basicV10Reply(req, `token-${issued}`) ?? { status: 404 };
    });
    const clock = new RecordingClock();
    const driver = createV10Driver(
      testOptions({ baseUrl: fake.url, tokenUrl: fake.url + FAKE_TOKEN_PATH }, { clock }),
    );
    await driver.open();
    expect(await driver.checkin()).toEqual({ checkedIn: true, pollDelayMs: 1000 });
    expect(issued).toBe(2);
    const checkins = fake.requests.filter((r) => r.path.endsWith("/checkin"));
    expect(checkins.map((r) => r.headers.authorization)).toEqual(["Bearer token-1", "Bearer token-2"]);

    rejectNext = 5;
    const err = await driver.checkin().catch((e: unknown) => e);
    expect(isPaymentError(err, "unauthorized")).toBe(true);
    expect(issued).toBe(3); // one refresh, then the 401 is final
    expect(clock.sleeps).toEqual([]); // a 401 is not a retry with backoff
    await driver.close();
  });

  it("maps a refused token request to unauthorized, without the secret in the message", async () => {
    fake = await startFakeService(() => ({ status: 401 }));
    const driver = createV10Driver(
      testOptions(
        { baseUrl: fake.url, tokenUrl: fake.url + FAKE_TOKEN_PATH },
        { clock: new RecordingClock() },
      ),
    );
    const err = await driver.open().catch((e: unknown) => e);
    expect(isPaymentError(err, "unauthorized")).toBe(true);
    expect(String((err as Error).message)).not.toContain("secret-canary-7f3a");
    expect(JSON.stringify(err)).not.toContain("secret-canary-7f3a");
    await driver.close();
  });

  it("never logs the secret or the token (canary), also while retrying", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    let fails = 2;
    fake = await startFakeService((req): FakeReply => {
      if (req.path === "/v10/pointofsales" && fails-- > 0) return { status: 503 };
      return basicV10Reply(req, "token-canary-91c2") ?? { status: 404 };
    });
    const driver = createV10Driver(
      testOptions(
        { baseUrl: fake.url, tokenUrl: fake.url + FAKE_TOKEN_PATH },
        { clock: new RecordingClock(), logger: pino({ level: "debug" }, sink) },
      ),
    );
    await driver.open();
    await driver.close();
    const all = lines.join("");
    expect(lines.length).toBeGreaterThanOrEqual(3); // two retry warnings, one "ready"
    expect(all).toContain("retrying");
    expect(all).not.toContain("secret-canary-7f3a");
    expect(all).not.toContain("token-canary-91c2");
  });
});
