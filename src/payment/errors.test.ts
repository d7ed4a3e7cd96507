import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.js";
import { PaymentError } from "./errors.js";
import { createLegacyDriver } from "./legacy/driver.js";
import { toPaymentError as legacyError } from "./legacy/errors.js";
import { type V10Failure, toPaymentError as v10Error } from "./v10/errors.js";
import { createV10Driver } from "./v10/index.js";
import { testOptions } from "./v10/v10.test-support.js";

/**
 * PaymentError keeps the error behind it as its ES2022 `cause`, through every mapping of both interfaces,
 * while its message stays free of secrets (issue 11: "PaymentError drops its cause").
 */

const SECRET = "canary-secret-5e1f";
const boom = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });

/** A loopback port with nothing listening (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

/** The `cause` chain of an error, outermost first. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, i = 0; e !== undefined && i < 5; i++) {
    out.push(e);
    e = e instanceof Error ? e.cause : undefined;
  }
  return out;
}

const codeOf = (e: unknown): unknown =>
  typeof e === "object" && e !== null ? Reflect.get(e, "code") : undefined;

describe("PaymentError cause", () => {
  it("is the ES2022 cause when given, absent otherwise", () => {
    expect(new PaymentError("unavailable", "x", {}, { cause: boom }).cause).toBe(boom);
    expect("cause" in new PaymentError("invalid", "x")).toBe(false);
  });

  it.each<V10Failure>([
    { kind: "notSent", detail: "ECONNREFUSED", cause: boom },
    { kind: "network", detail: "ECONNRESET", cause: boom },
    { kind: "timeout", detail: "no answer within 500 ms", cause: boom },
    { kind: "malformed", status: 200, detail: "paymentId: not a string", mutating: true, cause: boom },
  ])("V10 $kind keeps its cause", (f) => {
    const e = v10Error("capture", f);
    expect(e.cause).toBe(boom);
    expect(e.message).not.toContain("socket hang up");
  });

  it("a V10 HTTP answer has no exception behind it, so no cause", () => {
    expect("cause" in v10Error("capture", { kind: "status", status: 500, code: "2001" })).toBe(false);
  });

  it.each([
    { kind: "lost" as const, detail: "ECONNRESET", cause: boom },
    { kind: "notSent" as const, detail: "ECONNREFUSED", cause: boom },
  ])("older interface $kind keeps its cause", (f) => {
    expect(legacyError("ReservationCapture", f).cause).toBe(boom);
  });

  it("V10 driver: a refused connection surfaces with undici's error as the cause, no secret anywhere in the message", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const driver = createV10Driver(
      testOptions(
        { baseUrl: url, tokenUrl: `${url}/connect/token`, clientSecret: SECRET },
        { clock: systemClock, retries: { max: 0 } },
      ),
    );
    const err = await driver.open().catch((e: unknown) => e);
    await driver.close();
    expect(err).toBeInstanceOf(PaymentError);
    expect((err as PaymentError).ambiguous).toBe(false);
    expect(chain(err).some((e) => codeOf(e) === "ECONNREFUSED")).toBe(true);
    for (const e of chain(err)) expect(e instanceof Error ? e.message : "").not.toContain(SECRET);
  });

  it("older driver: a refused connection surfaces with undici's error as the cause, no key in the message", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const driver = createLegacyDriver({
      baseUrl: url,
      apiVersion: "V08",
      merchantId: "POSDK99999",
      locationId: "88888",
      posId: "unit-1",
      posUnitId: "100000000000001",
      posName: "Unit 1",
      bulkRef: "",
      captureType: "full",
      apiKey: SECRET,
      merchantKey: `${SECRET}-m`,
      clock: systemClock,
      ownsOrder: () => false,
    });
    const err = await driver.status({ id: "o-1", orderId: "o-1", mode: "reservation" }).catch((e) => e);
    await driver.close();
    expect(err).toBeInstanceOf(PaymentError);
    expect(chain(err).some((e) => codeOf(e) === "ECONNREFUSED")).toBe(true);
    for (const e of chain(err)) expect(e instanceof Error ? e.message : "").not.toContain(SECRET);
  });
});
