import { afterEach, describe, expect, it } from "vitest";
import { PaymentError } from "../errors.js";
import { backoffDelay, seededRandom } from "../retry.js";
import {
  FAKE_TOKEN_PATH,
  type FakeReply,
  type FakeRequest,
  type FakeService,
  startFakeService,
} from "./fake-service.test-support.js";
import { createV10Driver } from "./index.js";
import { basicV10Reply, RecordingClock, testOptions } from "./v10.test-support.js";

/**
 * Faults the emulator may not produce on demand, against a loopback fake that applies each creating POST
 * once per idempotency key (pos-v10 §9) and then misbehaves as scripted (reliability.md §2.3, §7 rung 4).
 */
let fake: FakeService | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

type Fault = "reset" | "lost" | "hang" | "500";

/** A fake whose POST /v10/payments applies by key, then answers with the next scripted fault. */
async function faultyService(faults: Fault[]) {
  const applied = new Map<string, string>();
  const service = await startFakeService((req: FakeRequest): FakeReply => {
    const basic = basicV10Reply(req);
    if (basic) return basic;
    if (req.method === "POST" && req.path === "/v10/payments") {
      const key = String(req.headers["x-service-idempotency-key"]);
      if (!applied.has(key)) applied.set(key, `p-${applied.size + 1}`);
      const fault = faults.shift();
      if (fault === "500") return { status: 500, body: { code: "2001", message: "internal" } };
      if (fault) return { fault };
      return { status: 200, body: { paymentId: applied.get(key) } };
    }
    return { status: 404 };
  });
  return { service, applied };
}

async function openDriver(service: FakeService, clock: RecordingClock, seed = 1) {
  const driver = createV10Driver(
    testOptions(
      { baseUrl: service.url, tokenUrl: service.url + FAKE_TOKEN_PATH },
      { clock, random: seededRandom(seed), timeouts: { postMs: 150, getMs: 150 } },
    ),
  );
  await driver.open();
  return driver;
}

const initiates = (s: FakeService) =>
  s.requests.filter((r) => r.method === "POST" && r.path === "/v10/payments");

describe("V10 retries under faults", () => {
  for (const fault of ["reset", "lost", "500"] as const) {
    it(`a ${fault} after apply is retried with the same key and creates one payment`, async () => {
      const { service, applied } = await faultyService([fault]);
      fake = service;
      const clock = new RecordingClock();
      const driver = await openDriver(service, clock, 7);
      const ref = await driver.start({ orderId: "o-1", amount: 500, idempotencyKey: "key-1" });
      expect(ref).toEqual({ id: "p-1", orderId: "o-1", mode: "reservation" });
      expect(applied.size).toBe(1);
      const keys = initiates(service).map((r) => r.headers["x-service-idempotency-key"]);
      expect(keys).toEqual(["key-1", "key-1"]);
      // Seeded jitter: the one backoff is exactly the first draw of seed 7.
      expect(clock.sleeps).toEqual([
        backoffDelay(1, { baseDelayMs: 100, maxDelayMs: 2000 }, seededRandom(7)),
      ]);
      await driver.close();
    });
  }

  it("a hang times out on the injected clock, is retried, and the answer of the retry is used", async () => {
    const { service, applied } = await faultyService(["hang"]);
    fake = service;
    const clock = new RecordingClock();
    const driver = await openDriver(service, clock);
    const t0 = clock.now();
    const ref = await driver.start({ orderId: "o-1", amount: 500, idempotencyKey: "key-h" });
    expect(ref.id).toBe("p-1");
    expect(applied.size).toBe(1);
    expect(initiates(service).length).toBe(2);
    // Virtual time: exactly the expired deadline (postMs 150) and the one backoff; the answered retry
    // costs nothing, so a busy machine cannot change the figure.
    expect(clock.sleeps.length).toBe(1);
    expect(clock.now() - t0).toBe(150 + (clock.sleeps[0] ?? Number.NaN));
    await driver.close();
  });

  it("persistent 5xx: three calls (2 retries), then an ambiguous unavailable error", async () => {
    const { service } = await faultyService(["500", "500", "500", "500"]);
    fake = service;
    const clock = new RecordingClock();
    const driver = await openDriver(service, clock);
    const err = await driver
      .start({ orderId: "o-1", amount: 500, idempotencyKey: "key-5" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentError);
    const pe = err as PaymentError;
    expect(pe.code).toBe("unavailable");
    expect(pe.ambiguous).toBe(true);
    expect(pe.details).toMatchObject({ status: 500, serviceCode: "2001" });
    expect(initiates(service).length).toBe(3);
    expect(clock.sleeps.length).toBe(2);
    expect(clock.sleeps[1]).toBeGreaterThanOrEqual(100); // second backoff doubles: [100, 200]
    await driver.close();
  });

  it("persistent timeouts end ambiguous; a refused connection is not ambiguous", async () => {
    const { service } = await faultyService(["hang", "hang", "hang"]);
    fake = service;
    const clock = new RecordingClock();
    const driver = await openDriver(service, clock);
    const err = await driver
      .start({ orderId: "o-1", amount: 500, idempotencyKey: "key-t" })
      .catch((e: unknown) => e);
    expect((err as PaymentError).code).toBe("unavailable");
    expect((err as PaymentError).ambiguous).toBe(true);
    expect((err as PaymentError).message).toContain("timed out");
    await driver.close();
    const url = service.url;
    await service.close();
    fake = null;
    const closed = createV10Driver(testOptions({ baseUrl: url, tokenUrl: url + FAKE_TOKEN_PATH }, { clock }));
    const refused = await closed.open().catch((e: unknown) => e);
    expect((refused as PaymentError).code).toBe("unavailable");
    expect((refused as PaymentError).ambiguous).toBe(false);
    await closed.close();
  });

  it("capture has no key but is naturally idempotent: a reset capture is retried; a 409 is not", async () => {
    let captures = 0;
    fake = await startFakeService((req): FakeReply => {
      const basic = basicV10Reply(req);
      if (basic) return basic;
      if (req.path === "/v10/payments/p-9/capture") {
        captures += 1;
        return captures === 1 ? { fault: "reset" } : { status: 200 };
      }
      if (req.path === "/v10/payments/p-8/capture") {
        return { status: 409, body: { code: "1308", message: "no partial" } };
      }
      return { status: 404 };
    });
    const clock = new RecordingClock();
    const driver = await openDriver(fake, clock);
    await driver.capture({ id: "p-9", orderId: "o-9", mode: "reservation" }, 700);
    expect(captures).toBe(2);
    const err = await driver.capture({ id: "p-8", orderId: "o-8", mode: "reservation" }, 100).catch((e) => e);
    expect((err as PaymentError).code).toBe("partialCaptureNotPossible");
    expect(fake.requests.filter((r) => r.path === "/v10/payments/p-8/capture").length).toBe(1);
    await driver.close();
  });

  it("an abort during backoff ends the call ambiguous after the failed attempt; an aborted signal sends nothing", async () => {
    const ac = new AbortController();
    fake = await startFakeService((req): FakeReply => {
      const basic = basicV10Reply(req);
      if (basic) return basic;
      ac.abort(new Error("stop")); // the caller gives up while the first attempt is answered 500
      return { status: 500, body: { code: "2001" } };
    });
    const clock = new RecordingClock();
    const driver = await openDriver(fake, clock);
    const err = await driver
      .start({ orderId: "o-1", amount: 500, idempotencyKey: "key-a" }, ac.signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentError);
    expect((err as PaymentError).ambiguous).toBe(true);
    expect((err as PaymentError).message).toContain("aborted by caller");
    // The failure the caller gave up after is kept as the cause.
    const cause = (err as PaymentError).cause;
    expect(cause).toBeInstanceOf(PaymentError);
    expect(cause).toMatchObject({ code: "unavailable", details: { ambiguous: true } });
    expect(initiates(fake).length).toBe(1);
    const again = await driver
      .start({ orderId: "o-1", amount: 500, idempotencyKey: "key-a" }, ac.signal)
      .catch((e: unknown) => e);
    expect((again as PaymentError).ambiguous).toBe(false);
    expect(initiates(fake).length).toBe(1);
    await driver.close();
  });
});
