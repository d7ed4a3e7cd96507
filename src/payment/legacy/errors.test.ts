import { describe, expect, it } from "vitest";
import { type LegacyFailure, toPaymentError } from "./errors.js";
import { stateOf } from "./read.js";
import { readAnswer } from "./transport.js";

const refused = (statusCode: number): LegacyFailure => ({
  kind: "refused",
  status: 400,
  statusCode,
  statusText: "t",
});

describe("toPaymentError: every StatusCode of the seed's table", () => {
  it.each([
    ["PaymentStart", 10, "invalid"],
    ["PaymentStart", 30, "notFound"],
    ["PaymentStart", 40, "conflict"],
    ["PaymentStart", 50, "busy"],
    ["ReservationStart", 40, "conflict"],
    ["ReservationStart", 50, "busy"],
    ["GetUniquePoSId", 20, "notFound"],
    ["PaymentCancel", 50, "conflict"],
    ["ReservationCancel", 50, "conflict"],
    ["ReservationCapture", 50, "conflict"],
    ["PaymentRefund", 1, "refundRefused"],
    ["PaymentRefund", 2, "refundRefused"],
    ["PaymentRefund", 3, "refundRefused"],
    ["PaymentRefund", 50, "refundRefused"],
    ["PaymentRefund", 99, "refundRefused"],
    ["GetPaymentStatus", 77, "invalid"],
  ])("%s StatusCode %i → %s", (op, code, expected) => {
    const e = toPaymentError(op, refused(code));
    expect(e.code).toBe(expected);
    expect(e.ambiguous).toBe(false);
    expect(e.details).toEqual({ status: 400, serviceCode: String(code) });
  });

  it("transport failures", () => {
    expect(toPaymentError("X", { kind: "status", status: 401 }).code).toBe("unauthorized");
    expect(toPaymentError("X", { kind: "lost", detail: "reset" })).toMatchObject({
      code: "unavailable",
      ambiguous: true,
    });
    expect(toPaymentError("X", { kind: "notSent", detail: "ECONNREFUSED" })).toMatchObject({
      ambiguous: false,
    });
  });
});

describe("readAnswer (pos-legacy §1)", () => {
  it("204 is an empty object; 200 must be a JSON object; 400 needs an integer StatusCode; 5xx is lost", () => {
    expect(readAnswer(204, "")).toEqual({ body: new Map() });
    expect(readAnswer(200, '{"PoSId":"a"}')).toEqual({ body: new Map([["posid", "a"]]) });
    expect(readAnswer(200, "[1]")).toMatchObject({ failure: { kind: "lost" } });
    expect(readAnswer(400, '{"statuscode":50,"statustext":"busy"}')).toEqual({
      failure: { kind: "refused", status: 400, statusCode: 50, statusText: "busy" },
    });
    expect(readAnswer(400, '{"StatusCode":"50"}')).toEqual({ failure: { kind: "status", status: 400 } });
    expect(readAnswer(502, "")).toMatchObject({ failure: { kind: "lost", status: 502 } });
  });
});

describe("stateOf (seed status values)", () => {
  it.each([
    [10, "reservation", "pending"],
    [30, "payment", "pending"],
    [20, "payment", "issued"],
    [60, "payment", "issued"],
    [80, "reservation", "issued"],
    [100, "reservation", "reserved"],
    [100, "payment", "paid"],
    [40, "payment", "cancelled"],
    [50, "reservation", "failed"],
  ] as const)("%i (%s) → %s", (status, mode, state) => {
    expect(stateOf(status, mode, "op")).toBe(state);
  });

  it("refuses an unknown status", () => {
    expect(() => stateOf(90, "payment", "op")).toThrow(/unknown status 90/);
  });
});
