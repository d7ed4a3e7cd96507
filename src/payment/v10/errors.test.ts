import { describe, expect, it } from "vitest";
import type { PaymentErrorCode } from "../errors.js";
import { classifyTransportError, errorCodeOf, toPaymentError, type V10Failure } from "./errors.js";

describe("toPaymentError (pos-v10 §11)", () => {
  const table: { f: V10Failure; code: PaymentErrorCode; ambiguous: boolean }[] = [
    { f: { kind: "notSent", detail: "ECONNREFUSED" }, code: "unavailable", ambiguous: false },
    { f: { kind: "network", detail: "UND_ERR_SOCKET" }, code: "unavailable", ambiguous: true },
    { f: { kind: "timeout", detail: "500 ms" }, code: "unavailable", ambiguous: true },
    {
      f: { kind: "malformed", status: 200, detail: "x", mutating: true },
      code: "unavailable",
      ambiguous: true,
    },
    {
      f: { kind: "malformed", status: 200, detail: "x", mutating: false },
      code: "unavailable",
      ambiguous: false,
    },
    { f: { kind: "status", status: 500, code: "2001" }, code: "unavailable", ambiguous: true },
    { f: { kind: "status", status: 503, code: undefined }, code: "unavailable", ambiguous: true },
    { f: { kind: "status", status: 401, code: undefined }, code: "unauthorized", ambiguous: false },
    { f: { kind: "status", status: 403, code: "1401" }, code: "forbidden", ambiguous: false },
    { f: { kind: "status", status: 404, code: undefined }, code: "notFound", ambiguous: false },
    { f: { kind: "status", status: 404, code: "1004" }, code: "notFound", ambiguous: false },
    { f: { kind: "status", status: 400, code: "1102" }, code: "invalid", ambiguous: false },
    { f: { kind: "status", status: 400, code: "1164" }, code: "invalid", ambiguous: false },
    { f: { kind: "status", status: 413, code: "1099" }, code: "invalid", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1000" }, code: "notFound", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1001" }, code: "notFound", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1200" }, code: "conflict", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1300" }, code: "conflict", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1301" }, code: "busy", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1304" }, code: "conflict", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1305" }, code: "invalid", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1306" }, code: "idempotencyMismatch", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1307" }, code: "conflict", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1308" }, code: "partialCaptureNotPossible", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1351" }, code: "conflict", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1354" }, code: "refundRefused", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1367" }, code: "refundRefused", ambiguous: false },
    { f: { kind: "status", status: 409, code: "1368" }, code: "refundRefused", ambiguous: false },
    { f: { kind: "status", status: 409, code: "9999" }, code: "conflict", ambiguous: false },
    { f: { kind: "status", status: 409, code: undefined }, code: "conflict", ambiguous: false },
  ];
  for (const row of table) {
    const label = row.f.kind === "status" ? `${row.f.status} ${row.f.code ?? "-"}` : row.f.kind;
    it(`${label} → ${row.code}${row.ambiguous ? " (ambiguous)" : ""}`, () => {
      const e = toPaymentError("op", row.f);
      expect(e.code).toBe(row.code);
      expect(e.ambiguous).toBe(row.ambiguous);
      if (row.f.kind === "status") {
        expect(e.details.status).toBe(row.f.status);
        expect(e.details.serviceCode).toBe(row.f.code);
      }
    });
  }
});

describe("errorCodeOf (pos-v10 §5)", () => {
  it("reads string codes and treats empty or missing ones as absent", () => {
    expect(errorCodeOf({ code: "1301", message: "x", correlationId: null })).toBe("1301");
    expect(errorCodeOf({ code: "" })).toBeUndefined();
    expect(errorCodeOf({ code: null })).toBeUndefined();
    expect(errorCodeOf({ code: 1308 })).toBe("1308");
    expect(errorCodeOf(undefined)).toBeUndefined();
    expect(errorCodeOf("1301")).toBeUndefined();
  });
});

describe("classifyTransportError", () => {
  const withCode = (code: string) => Object.assign(new Error("x"), { code });
  it("tells never-sent from maybe-applied", () => {
    expect(classifyTransportError(withCode("ECONNREFUSED")).kind).toBe("notSent");
    expect(
      classifyTransportError(Object.assign(new Error("fetch failed"), { cause: withCode("ECONNREFUSED") }))
        .kind,
    ).toBe("notSent");
    expect(classifyTransportError(withCode("UND_ERR_CONNECT_TIMEOUT")).kind).toBe("notSent");
    expect(classifyTransportError(withCode("UND_ERR_SOCKET")).kind).toBe("network");
    expect(classifyTransportError(withCode("ECONNRESET")).kind).toBe("network");
    expect(classifyTransportError(withCode("UND_ERR_HEADERS_TIMEOUT")).kind).toBe("timeout");
    expect(classifyTransportError(withCode("UND_ERR_BODY_TIMEOUT")).kind).toBe("timeout");
    expect(classifyTransportError("weird").kind).toBe("network");
  });
});
