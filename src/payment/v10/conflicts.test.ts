import { afterEach, describe, expect, it } from "vitest";
import type { PaymentRef } from "../driver.js";
import {
  FAKE_TOKEN_PATH,
  type FakeReply,
  type FakeRequest,
  type FakeService,
  startFakeService,
} from "./fake-service.test-support.js";
import { deriveRecoveryKey } from "./ids.js";
import { createV10Driver } from "./index.js";
import { basicV10Reply, RecordingClock, testOptions } from "./v10.test-support.js";

/** 409 handling by re-querying (pos-v10 §12): capture, cancel and start (1301 recovery, certification P4). */
let fake: FakeService | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

interface P {
  orderId: string;
  status: string;
  amount: number;
}

/** Payments by id; scripted 409 answers per path; every other call served from the map. */
async function service(payments: Record<string, P>, conflicts: Record<string, string[]>) {
  const s = await startFakeService((req: FakeRequest): FakeReply => {
    const basic = basicV10Reply(req);
    if (basic) return basic;
    const code = conflicts[`${req.method} ${req.path}`]?.shift();
    if (code) return { status: 409, body: { code, message: "conflict", correlationId: null } };
    if (req.method === "GET" && req.path === "/v10/payments") {
      const ids = Object.entries(payments)
        .filter(([, p]) =>
          req.query.get("state") === "Captured" ? p.status === "Captured" : p.status !== "Captured",
        )
        .filter(([, p]) => !req.query.has("orderId") || p.orderId === req.query.get("orderId"))
        .map(([id]) => id);
      return { status: 200, body: { paymentIds: ids } };
    }
    const id = req.path.split("/")[3] ?? "";
    const p = payments[id];
    if (!p) {
      if (req.method === "POST" && req.path === "/v10/payments") {
        return {
          status: 200,
          body: { paymentId: `new-${String(req.headers["x-service-idempotency-key"])}` },
        };
      }
      return { status: 404 };
    }
    if (req.method === "GET") {
      return { status: 200, body: { paymentId: id, posId: "pos-1", pollDelayInMs: 1000, ...p } };
    }
    if (req.path.endsWith("/cancel")) p.status = "CancelledByClient";
    return { status: 200 };
  });
  fake = s;
  return s;
}

async function driverFor(s: FakeService, owned: string[] = []) {
  const d = createV10Driver(
    testOptions(
      { baseUrl: s.url, tokenUrl: s.url + FAKE_TOKEN_PATH },
      { clock: new RecordingClock(), ownsOrder: (o) => owned.includes(o) },
    ),
  );
  await d.open();
  return d;
}

const ref = (id: string, orderId: string): PaymentRef => ({ id, orderId, mode: "reservation" });

describe("409 re-queries", () => {
  it("capture answered 1304/1307: Captured with the same amount resolves, otherwise conflict", async () => {
    const s = await service(
      {
        a: { orderId: "oa", status: "Captured", amount: 12.5 },
        b: { orderId: "ob", status: "Captured", amount: 10 },
      },
      { "POST /v10/payments/a/capture": ["1304"], "POST /v10/payments/b/capture": ["1307"] },
    );
    const d = await driverFor(s);
    await expect(d.capture(ref("a", "oa"), 1250)).resolves.toBeUndefined();
    await expect(d.capture(ref("b", "ob"), 1250)).rejects.toMatchObject({
      code: "conflict",
      details: { status: 409, serviceCode: "1307" },
    });
    await d.close();
  });

  it("cancel answered 1300: CancelledBy* resolves, Captured is a conflict", async () => {
    const s = await service(
      {
        a: { orderId: "oa", status: "CancelledByUser", amount: 5 },
        b: { orderId: "ob", status: "Captured", amount: 5 },
      },
      { "POST /v10/payments/a/cancel": ["1300"], "POST /v10/payments/b/cancel": ["1300"] },
    );
    const d = await driverFor(s);
    await expect(d.cancel(ref("a", "oa"))).resolves.toBeUndefined();
    await expect(d.cancel(ref("b", "ob"))).rejects.toMatchObject({ code: "conflict" });
    await d.close();
  });

  it("start answered 1301, active payment not ours: cancel it, initiate again with the derived key", async () => {
    const payments: Record<string, P> = { old: { orderId: "stale", status: "IssuedToUser", amount: 3 } };
    const s = await service(payments, { "POST /v10/payments": ["1301"] });
    const d = await driverFor(s);
    const r = await d.start({
      orderId: "o-2",
      amount: 700,
      idempotencyKey: "00000000-0000-4000-8000-000000000001",
    });
    const derived = deriveRecoveryKey("00000000-0000-4000-8000-000000000001");
    expect(derived.length).toBeLessThanOrEqual(36);
    expect(derived).not.toBe("00000000-0000-4000-8000-000000000001");
    expect(r).toEqual({ id: `new-${derived}`, orderId: "o-2", mode: "reservation" });
    expect(payments.old?.status).toBe("CancelledByClient");
    const keys = s.requests.filter((q) => q.method === "POST" && q.path === "/v10/payments");
    expect(keys.map((q) => q.headers["x-service-idempotency-key"])).toEqual([
      "00000000-0000-4000-8000-000000000001",
      derived,
    ]);
    await d.close();
  });

  it("start answered 1301, active payment owned by a live session: busy, nothing cancelled", async () => {
    const payments: Record<string, P> = { mine: { orderId: "live", status: "Initiated", amount: 3 } };
    const s = await service(payments, { "POST /v10/payments": ["1301"] });
    const d = await driverFor(s, ["live"]);
    await expect(d.start({ orderId: "o-3", amount: 700, idempotencyKey: "key-3" })).rejects.toMatchObject({
      code: "busy",
      details: { serviceCode: "1301" },
    });
    expect(payments.mine?.status).toBe("Initiated");
    expect(s.requests.some((q) => q.path.endsWith("/cancel"))).toBe(false);
    await d.close();
  });

  it("recovery runs at most once: a second 1301 is busy", async () => {
    const s = await service({}, { "POST /v10/payments": ["1301", "1301", "1301"] });
    const d = await driverFor(s);
    await expect(d.start({ orderId: "o-4", amount: 100, idempotencyKey: "key-4" })).rejects.toMatchObject({
      code: "busy",
    });
    expect(s.requests.filter((q) => q.method === "POST" && q.path === "/v10/payments").length).toBe(2);
    await d.close();
  });

  it("lookup finds active, then captured payments; null when neither list has the order", async () => {
    const s = await service(
      {
        a: { orderId: "oa", status: "Reserved", amount: 2 },
        c: { orderId: "oc", status: "Captured", amount: 4 },
      },
      {},
    );
    const d = await driverFor(s);
    expect((await d.lookup("oa"))?.state).toBe("reserved");
    expect((await d.lookup("oc"))?.state).toBe("captured");
    expect(await d.lookup("nope")).toBeNull();
    expect((await d.findActive()).map((o) => o.ref)).toEqual([ref("a", "oa")]);
    await d.close();
  });
});
